"""Train the entity and relation model on SciERC train, keep the epoch best on dev, ship it.

    python -m kg.extract.entities.train [--data DIR] [--epochs N] [--out PATH] [--limit N]

Fixed seed; CPU; each abstract is one forward pass (gradients accumulated over a few abstracts).
Entities: cross-entropy over every span of <= 8 words in a sentence. Relations: cross-entropy
over the ordered pairs of gold entities in a sentence (PURE trains on gold entities too); dev is
scored end to end, relations between predicted entities. The best epoch by dev entity F1 +
relation F1 is written with a JSON beside it: sha256, config, seed, command, dev scores.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from .model import (
    NER_LABELS, REL_LABELS, ModelConfig, build_model, candidate_spans, encode_words, predict, same_sentence_pairs,
    save_weights, tokenizer, weights_path,
)
from .rules import baseline_predict, dataset_type
from .scierc import ENTITY_TYPES, Document, Prediction, data_dir, evaluate, read_scierc, sentence_bounds, word_text


def text_sentences(document: Document) -> list[list[str]]:
    return [[word_text(w) for w in s] for s in document.sentences]


def example(document: Document, max_width: int):
    """The tensors' inputs of one abstract: encoding, candidate spans and their labels, gold entity
    pairs and their labels."""
    sentences = text_sentences(document)
    encoding = encode_words(tokenizer(), sentences)
    spans = candidate_spans([len(s) for s in sentences], max_width)
    gold = {(s, e): NER_LABELS.index(t) for s, e, t in document.entities}
    span_labels = [gold.get(span, 0) for span in spans]
    entities = sorted(gold)
    types = [gold[span] - 1 for span in entities]
    pairs = same_sentence_pairs(entities, [len(s) for s in sentences])
    relations = {((a, b), (c, d)): REL_LABELS.index(t) for a, b, c, d, t in document.relations}
    pair_labels = [relations.get((entities[i], entities[j]), 0) for i, j in pairs]
    return encoding, spans, span_labels, entities, types, pairs, pair_labels


def model_predict(model, document: Document) -> Prediction:
    """End-to-end prediction in SciERC offsets, Dataset split out of Material by the rules."""
    entities, relations = predict(model, text_sentences(document))
    words, bounds = document.words, sentence_bounds(document.sentences)

    def typed(s, e, t):
        sentence = next(b for b in bounds if b[0] <= s < b[1])
        return (s, e, dataset_type(words, sentence, s, e, t))

    return Prediction(
        frozenset(typed(s, e, t) for s, e, t, _ in entities),
        frozenset((*entities[i][:2], *entities[j][:2], t) for i, j, t, _ in relations),
    )


def dev_scores(model, documents: list[Document]):
    model.eval()
    return evaluate(documents, [model_predict(model, d) for d in documents])


def train(args) -> dict:
    import torch
    from transformers import AutoModel, get_linear_schedule_with_warmup

    from kg.extract.embed import model_path, verify_model

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    folder = data_dir() if args.data is None else Path(args.data)
    train_docs = read_scierc(folder / "train.jsonl")[: args.limit or None]
    dev_docs = read_scierc(folder / "dev.jsonl")[: args.dev_limit or None]
    verify_model(model_path())
    config = ModelConfig(context=args.context, layers=args.layers)
    model = build_model(AutoModel.from_pretrained(str(model_path())), config)
    examples = [example(d, config.max_width) for d in train_docs]
    targets = teacher_targets(Path(args.teacher), examples) if args.teacher else None
    encoder = [p for n, p in model.named_parameters() if n.startswith("encoder.") and p.requires_grad]
    heads = [p for n, p in model.named_parameters() if not n.startswith("encoder.")]
    optimizer = torch.optim.AdamW(
        [{"params": encoder, "lr": args.lr}, {"params": heads, "lr": args.head_lr}], weight_decay=0.01)
    steps = args.epochs * ((len(examples) + args.accumulate - 1) // args.accumulate)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), steps)
    weights = torch.ones(len(NER_LABELS))
    weights[0] = args.none_weight
    ner_loss = torch.nn.CrossEntropyLoss(weight=weights, reduction="sum")
    rel_weights = torch.ones(len(REL_LABELS))
    rel_weights[0] = args.none_weight
    rel_loss = torch.nn.CrossEntropyLoss(weight=rel_weights, reduction="sum")
    best, history = -1.0, []
    out = Path(args.out) if args.out else weights_path()
    baseline = evaluate(dev_docs, [baseline_predict(d) for d in dev_docs])
    order = list(range(len(examples)))
    for epoch in range(1, args.epochs + 1):
        model.train()
        random.shuffle(order)
        started, total = time.time(), 0.0
        for step, k in enumerate(order, 1):
            _, _, span_labels, _, _, pairs, pair_labels = examples[k]
            span_logits, logits = forward(model, examples[k])
            loss = ner_loss(span_logits, torch.tensor(span_labels))
            if targets:
                loss = (1 - args.distill) * loss + args.distill * soft_loss(span_logits, targets[k][0])
            if pairs:
                pair_loss = rel_loss(logits, torch.tensor(pair_labels))
                if targets:
                    pair_loss = (1 - args.distill) * pair_loss + args.distill * soft_loss(logits, targets[k][1])
                loss = loss + pair_loss
            loss = loss / max(1, len(train_docs[k].sentences))
            (loss / args.accumulate).backward()
            total += loss.item()
            if step % args.accumulate == 0 or step == len(order):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
            if step % 50 == 0:
                print(json.dumps({"epoch": epoch, "step": step, "seconds": round(time.time() - started, 1)}), flush=True)
        seconds = time.time() - started
        scores = dev_scores(model, dev_docs)
        history.append({"epoch": epoch, "loss": round(total / len(order), 4), "seconds": round(seconds, 1),
                        "dev_entity_f1": round(scores.entity_f1, 2), "dev_relation_f1": round(scores.relation_f1, 2)})
        print(json.dumps(history[-1]), flush=True)
        if scores.entity_f1 + scores.relation_f1 > best:
            best, best_epoch, best_scores = scores.entity_f1 + scores.relation_f1, epoch, scores
            meta = save_weights(model, out, record(args, best_epoch, best_scores, baseline, history, train_docs, dev_docs))
    return record_int8(out, meta, dev_docs)


def record_int8(path: Path, meta: dict, dev_docs) -> dict:
    """*meta* with the dev scores of the written weights as kg runs them (int8, `load_model`), saved beside them."""
    from .model import load_model

    meta = {**meta, "dev_int8": dev_scores(load_model(path)[0], dev_docs).to_json()}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def teacher_targets(path: Path, examples) -> list:
    """A trained model's class probabilities (fp32) for each example's candidate spans and gold
    entity pairs: the soft targets a smaller model learns beside the gold labels (distillation)."""
    import torch

    from .model import load_model

    teacher, _ = load_model(path, precision="fp32")
    targets = []
    with torch.no_grad():  # not inference_mode: the targets enter the student's autograd graph
        for found in examples:
            span_logits, pair_logits = forward(teacher, found)
            targets.append((span_logits.softmax(-1), None if pair_logits is None else pair_logits.softmax(-1)))
    return targets


def forward(model, found):
    """The entity logits of an `example`'s candidate spans and the relation logits of its gold
    entity pairs (None when it has no pair): what training compares with the labels."""
    encoding, spans, _, entities, types, pairs, _ = found
    hidden = model.hidden(encoding)
    span_logits = model.span_logits(hidden, encoding, spans)
    if not pairs:
        return span_logits, None
    return span_logits, model.pairs(model.spans(hidden, encoding, entities), types, pairs, hidden, encoding, entities)


def soft_loss(logits, probabilities):
    """Cross-entropy of *logits* against the teacher's *probabilities*, summed over rows."""
    return -(probabilities * logits.log_softmax(-1)).sum()


def record(args, best_epoch, scores, baseline, history, train_docs, dev_docs) -> dict:
    """What the JSON beside the weights says about how they were made (written at each better epoch,
    so an interrupted run leaves its best epoch so far)."""
    return {
        "seed": args.seed, "command": "python -m kg.extract.entities.train " + " ".join(sys.argv[1:]),
        "epochs": args.epochs, "best_epoch": best_epoch, "train_abstracts": len(train_docs),
        "dev_abstracts": len(dev_docs), "lr": args.lr, "head_lr": args.head_lr, "accumulate": args.accumulate,
        "none_weight": args.none_weight, "teacher": args.teacher and Path(args.teacher).name, "distill": args.distill,
        "dev": scores.to_json(), "dev_baseline": baseline.to_json(),
        "history": history, "entity_types": list(ENTITY_TYPES),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kg.extract.entities.train", description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="the SciERC folder (default $KG_BENCH_DATA/scierc or ../shared/bench-data/scierc)")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--out", help=f"the weights file (default {weights_path()})")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--accumulate", type=int, default=2)
    parser.add_argument("--none-weight", type=float, default=0.5,
                        help="weight of the none class in both losses (0.5: F1 rose faster in the smoke runs)")
    parser.add_argument("--limit", type=int, default=0, help="train on the first N abstracts only (smoke runs)")
    parser.add_argument("--dev-limit", type=int, default=0)
    parser.add_argument("--context", action=argparse.BooleanOptionalAction, default=True,
                        help="relations also read the words between the two spans (dev relation F1 33 against 27 without)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=3,
                        help="the encoder's first N layers (of 6): 3 scored within a point of 6 on dev in 60 %% of the time")
    parser.add_argument("--teacher", help="weights of a trained model whose probabilities the new one also learns (distillation)")
    parser.add_argument("--distill", type=float, default=0.5, help="weight of the teacher's targets against the gold labels")
    meta = train(parser.parse_args(argv))
    print(json.dumps({k: meta[k] for k in ("file", "sha256", "bytes", "best_epoch", "dev", "dev_int8")}, indent=1))


if __name__ == "__main__":
    main()
