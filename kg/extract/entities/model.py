"""The entity and relation model: a PURE-style span classifier and a pair classifier on one
fine-tuned MiniLM encoder, and the shipped weights (save, checksum, load).

The encoder is the packaged all-MiniLM-L6-v2; its embedding layer stays frozen, so the shipped
file holds only the six transformer layers and the heads (fp16) and the embeddings are loaded
from the packaged model at run time. An abstract is read whole (cross-sentence context, as in
PURE); one longer than 510 word pieces is cut at sentence boundaries (a sentence longer than that
at word boundaries) into windows encoded one by one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from kg.errors import ModelError
from kg.extract.embed import file_sha256

from .rules import is_mention
from .scierc import ENTITY_TYPES, RELATION_TYPES, SYMMETRIC_RELATIONS

__all__ = [
    "ModelConfig", "Encoding", "build_model", "encode_words", "word_pieces", "save_weights", "load_model", "weights_path",
    "decode_entities", "decode_relations", "predict", "candidate_spans", "same_sentence_pairs", "RETRAIN_COMMAND", "NER_LABELS", "REL_LABELS",
]

NER_LABELS = ("none",) + ENTITY_TYPES
REL_LABELS = ("none",) + RELATION_TYPES
WINDOW = 510  # word pieces per window, [CLS] and [SEP] aside
RETRAIN_COMMAND = "python -m kg.extract.entities.train"
DATA_DIR = Path(__file__).resolve().parent / "data"


def weights_path() -> Path:
    return DATA_DIR / "entities.safetensors"


@dataclass(frozen=True)
class ModelConfig:
    """The heads' sizes; recorded in the weights' JSON so a load builds the same module."""

    max_width: int = 8
    width_dim: int = 32
    hidden: int = 256
    type_dim: int = 32
    dropout: float = 0.2
    # Relations also read the max-pooled word pieces between the two spans ("A is used for B",
    # "A outperforms B"): the cue words that the span ends alone do not carry.
    context: bool = False
    # The encoder's first *layers* transformer layers only (None: all six): fewer layers, less time per abstract.
    layers: int | None = None


@dataclass(frozen=True)
class Encoding:
    """An abstract as the model reads it: word-piece windows and, per word, the position of its
    first and last word piece in the windows' concatenated output."""

    windows: tuple[tuple[int, ...], ...]
    first: tuple[int, ...]
    last: tuple[int, ...]


def _windows(pieces: list[list[int]], sentences: list[int], limit: int = WINDOW) -> list[list[int]]:
    """Word indices per window: whole sentences while they fit, an overlong sentence cut between words."""
    windows, current, size, start = [], [], 0, 0
    for length in sentences:
        words = list(range(start, start + length))
        start += length
        cost = sum(len(pieces[w]) for w in words)
        if current and size + cost > limit:
            windows.append(current)
            current, size = [], 0
        for w in words:
            n = min(len(pieces[w]), limit)
            if current and size + n > limit:
                windows.append(current)
                current, size = [], 0
            current.append(w)
            size += n
    if current:
        windows.append(current)
    return windows


def word_pieces(tokenizer, words: list[str]) -> list[list[int]]:
    """The word pieces of each word, as ``tokenizer.encode(word)`` gives them one by one, in one
    call of the Rust tokenizer (twenty times faster: 0.6 ms an abstract instead of 12)."""
    encoded = tokenizer(words, is_split_into_words=True, add_special_tokens=False, truncation=False, padding=False)
    pieces: list[list[int]] = [[] for _ in words]
    for piece, word in zip(encoded["input_ids"], encoded.word_ids()):
        pieces[word].append(piece)
    return pieces


def encode_words(tokenizer, sentences: list[list[str]]) -> Encoding:
    """Word pieces of an abstract's words (already as text, not PTB escapes), in windows."""
    words = [w for sentence in sentences for w in sentence]
    pieces = [p[:WINDOW] or [tokenizer.unk_token_id] for p in word_pieces(tokenizer, words)]
    windows, first, last, offset = [], [0] * len(words), [0] * len(words), 0
    for window in _windows(pieces, [len(s) for s in sentences]):
        ids = [tokenizer.cls_token_id]
        for w in window:
            first[w] = offset + len(ids)
            ids.extend(pieces[w])
            last[w] = offset + len(ids) - 1
        ids.append(tokenizer.sep_token_id)
        windows.append(tuple(ids))
        offset += len(ids)
    return Encoding(tuple(windows), tuple(first), tuple(last))


def build_model(encoder, config: ModelConfig):
    """The torch module around *encoder* (a BertModel); its embeddings are frozen."""
    import torch
    from torch import nn

    if config.layers is not None:
        encoder.encoder.layer = encoder.encoder.layer[: config.layers]
        encoder.config.num_hidden_layers = config.layers

    class SpanModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = config
            self.encoder = encoder
            for p in self.encoder.embeddings.parameters():
                p.requires_grad = False
            size = encoder.config.hidden_size
            span = 2 * size + config.width_dim
            self.width = nn.Embedding(config.max_width, config.width_dim)
            self.ner = nn.Sequential(
                nn.Linear(span, config.hidden), nn.GELU(), nn.Dropout(config.dropout),
                nn.Linear(config.hidden, config.hidden), nn.GELU(), nn.Dropout(config.dropout),
                nn.Linear(config.hidden, len(NER_LABELS)),
            )
            self.project = nn.Sequential(nn.Linear(span, config.hidden), nn.GELU())
            self.types = nn.Embedding(len(ENTITY_TYPES), config.type_dim)
            if config.context:
                self.context = nn.Sequential(nn.Linear(size, config.hidden), nn.GELU())
            pair_size = (4 if config.context else 3) * config.hidden + 2 * config.type_dim
            self.relation = nn.Sequential(
                nn.Linear(pair_size, config.hidden), nn.GELU(),
                nn.Dropout(config.dropout), nn.Linear(config.hidden, len(REL_LABELS)),
            )

        def hidden(self, encoding: Encoding):
            """Hidden states of every word piece of every window, concatenated."""
            longest = max(len(w) for w in encoding.windows)
            ids = torch.zeros((len(encoding.windows), longest), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for i, w in enumerate(encoding.windows):
                ids[i, : len(w)] = torch.tensor(w)
                mask[i, : len(w)] = 1
            out = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            return out[mask.bool()]

        def span_indices(self, encoding: Encoding, spans):
            """Of each span (first word, last word): its first word's first piece, its last word's
            last piece, and its width in words (capped at the last width embedding)."""
            words = torch.tensor(spans, dtype=torch.long).reshape(-1, 2)
            starts = torch.tensor(encoding.first, dtype=torch.long)[words[:, 0]]
            ends = torch.tensor(encoding.last, dtype=torch.long)[words[:, 1]]
            return starts, ends, (words[:, 1] - words[:, 0]).clamp(max=config.max_width - 1)

        def spans(self, hidden, encoding: Encoding, spans):
            """Span representations [first piece of start; last piece of end; width]."""
            starts, ends, widths = self.span_indices(encoding, spans)
            return torch.cat([hidden[starts], hidden[ends], self.width(widths)], dim=-1)

        def span_logits(self, hidden, encoding: Encoding, spans):
            """Entity logits of *spans*: `ner` on their representations, its first layer applied
            per word piece and summed per span (W [start; end; width] = W_s start + W_e end +
            W_w width), one product per piece instead of one per span (eight a word)."""
            first, size = self.ner[0], hidden.shape[-1]
            starts, ends, widths = self.span_indices(encoding, spans)
            by_start = hidden @ first.weight[:, :size].T
            by_end = hidden @ first.weight[:, size : 2 * size].T
            by_width = self.width.weight @ first.weight[:, 2 * size :].T + first.bias
            return self.ner[1:](by_start[starts] + by_end[ends] + by_width[widths])

        def between(self, hidden, encoding: Encoding, spans, pairs):
            """Max-pooled hidden states of the word pieces between the two spans of each pair
            (zeros when they touch or overlap)."""
            zero = hidden.new_zeros(hidden.shape[-1])
            rows = []
            for i, j in pairs:
                (s1, e1), (s2, e2) = spans[i], spans[j]
                lo, hi = (e1, s2) if e1 < s2 else (e2, s1)
                a, b = encoding.last[lo] + 1, encoding.first[hi] if hi < len(encoding.first) else 0
                rows.append(hidden[a:b].max(0).values if hi - lo > 1 and b > a else zero)
            return torch.stack(rows)

        def pairs(self, span_vectors, types, pairs, hidden=None, encoding=None, spans=None):
            """Relation logits of ordered pairs (i, j) of the spans in *span_vectors* (*hidden*,
            *encoding* and the *spans* themselves are needed for the context between them)."""
            projected = self.project(span_vectors)
            i = torch.tensor([a for a, _ in pairs], dtype=torch.long)
            j = torch.tensor([b for _, b in pairs], dtype=torch.long)
            t = self.types(torch.tensor(types, dtype=torch.long))
            x = torch.cat([projected[i], projected[j], projected[i] * projected[j], t[i], t[j]], dim=-1)
            if config.context:
                x = torch.cat([x, self.context(self.between(hidden, encoding, spans, pairs))], dim=-1)
            return self.relation(x)

    return SpanModel()


def candidate_spans(sentence_lengths: list[int], max_width: int) -> list[tuple[int, int]]:
    """Every span of at most *max_width* words inside one sentence (inclusive offsets)."""
    spans, start = [], 0
    for length in sentence_lengths:
        for s in range(start, start + length):
            spans.extend((s, e) for e in range(s, min(s + max_width, start + length)))
        start += length
    return spans


def decode_entities(spans, probabilities) -> list[tuple[int, int, int, float]]:
    """Spans (start, end, label index, score) scored other than none, greedy by score, no two overlapping."""
    best = probabilities.argmax(-1).tolist()
    scores = probabilities.max(-1).values.tolist()
    chosen, taken = [], set()
    for k in sorted((k for k, label in enumerate(best) if label), key=lambda k: -scores[k]):
        s, e = spans[k]
        if not taken.intersection(range(s, e + 1)):
            taken.update(range(s, e + 1))
            chosen.append((s, e, best[k], scores[k]))
    return sorted(chosen)


def trainable_state(model) -> dict:
    """The parameters that ship: everything but the frozen embeddings and the unused pooler."""
    return {
        k: v.detach().to("cpu") for k, v in model.state_dict().items()
        if not k.startswith(("encoder.embeddings.", "encoder.pooler."))
    }


def save_weights(model, path: Path, record: dict) -> dict:
    """Write the trainable weights (fp16) to *path* and a JSON beside it (sha256, config, *record*)."""
    import torch
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in trainable_state(model).items()}
    save_file(state, str(path))
    path.chmod(0o644)
    meta = {"file": path.name, "sha256": file_sha256(path), "bytes": path.stat().st_size,
            "config": asdict(model.config), "torch": torch.__version__, **record}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def read_record(path: Path) -> dict:
    """The JSON beside the weights; a `ModelError` naming the file and the retrain command when absent or wrong."""
    meta_path = path.with_suffix(".json")
    hint = f"rebuild it with `{RETRAIN_COMMAND}`"
    if not path.is_file() or not meta_path.is_file():
        raise ModelError(f"{path if not path.is_file() else meta_path}: entity model weights missing; {hint}")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ModelError(f"{meta_path}: not JSON ({e}); {hint}") from e
    actual = file_sha256(path)
    if actual != meta.get("sha256"):
        raise ModelError(f"{path}: sha256 {actual} does not match the recorded {meta.get('sha256')}; {hint}")
    return meta


def load_model(path: Path | None = None, precision: str = "int8"):
    """The trained model, in eval mode, checked against its recorded checksum.

    ``precision="int8"`` (what kg runs) quantizes the encoder's linear layers as the keyphrase
    model's are (`kg.extract.embed.quantized`: a scale per output channel and per token, exact
    integer products, so the same bits on every CPU): on SciERC dev, the same F1 as fp32 within
    half a point, in two thirds of the time. PyTorch's dynamic quantization, one activation scale
    per matrix, cost 4 entity and 7 relation points. ``"fp32"``: the weights as trained."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModel

    from kg.extract.embed import model_path, quiet_transformers, verify_model

    path = path or weights_path()
    meta = read_record(path)
    quiet_transformers()
    folder = model_path()
    verify_model(folder)
    model = build_model(AutoModel.from_pretrained(str(folder)), ModelConfig(**meta["config"]))
    try:
        state = load_file(str(path))
        missing = set(trainable_state(model)) - set(state)
        if missing:
            raise ModelError(f"{path}: weights lack {sorted(missing)[:3]}; rebuild it with `{RETRAIN_COMMAND}`")
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state.items()}, strict=False)
    except (RuntimeError, OSError, ValueError) as e:
        raise ModelError(f"{path}: cannot load the entity model ({e}); rebuild it with `{RETRAIN_COMMAND}`") from e
    if precision not in ("fp32", "int8"):
        raise ModelError(f"unknown precision {precision!r}; use fp32 or int8")
    if precision == "int8":
        from kg.extract.embed import quantized

        quantized(model.encoder)
    model.eval()
    return model, meta


@lru_cache(maxsize=1)
def tokenizer():
    from transformers import AutoTokenizer

    from kg.extract.embed import model_path

    # encode_words cuts an abstract into windows the model takes; the tokenizer's own limit would
    # only warn, on stderr, about a whole abstract longer than one window.
    return AutoTokenizer.from_pretrained(str(model_path()), model_max_length=10**9)


def predict(model, sentences: list[list[str]]):
    """Entities (start, end, type, score) and relations (head index, tail index, type, score) of one
    abstract given as sentences of words (text, not PTB escapes); the model in eval mode."""
    import torch

    sentences = [s for s in sentences if s]
    if not sentences:
        return [], []
    encoding = encode_words(tokenizer(), sentences)
    with torch.inference_mode():
        hidden = model.hidden(encoding)
        spans = candidate_spans([len(s) for s in sentences], model.config.max_width)
        words = [w for s in sentences for w in s]
        found = [f for f in decode_entities(spans, model.span_logits(hidden, encoding, spans).softmax(-1))
                 if is_mention(words[f[0] : f[1] + 1], NER_LABELS[f[2]])]
        entities = [(s, e, NER_LABELS[label], score) for s, e, label, score in found]
        pairs = same_sentence_pairs([(s, e) for s, e, _, _ in found], [len(s) for s in sentences])
        relations = []
        if pairs:
            boundaries = [(s, e) for s, e, _, _ in found]
            chosen = model.spans(hidden, encoding, boundaries)
            types = [label - 1 for _, _, label, _ in found]
            probabilities = model.pairs(chosen, types, pairs, hidden, encoding, boundaries).softmax(-1)
            for (i, j), p in zip(pairs, probabilities):
                label = int(p.argmax())
                if label:
                    relations.append((i, j, REL_LABELS[label], float(p[label])))
    return entities, decode_relations(relations)


def decode_relations(relations: list[tuple[int, int, str, float]]) -> list[tuple[int, int, str, float]]:
    """At most one relation per pair of mentions, the likelier direction (SciERC never states
    both); a symmetric one (COMPARE, CONJUNCTION) head first in text order, as SciERC mostly
    writes it (85 % on train). Dev relation F1 32.3 -> 32.8."""
    best: dict[frozenset, tuple[int, int, str, float]] = {}
    for r in relations:
        pair = frozenset(r[:2])
        if pair not in best or r[3] > best[pair][3]:
            best[pair] = r
    return sorted((min(i, j), max(i, j), t, s) if t in SYMMETRIC_RELATIONS else (i, j, t, s)
                  for i, j, t, s in best.values())


def same_sentence_pairs(spans: list[tuple[int, int]], sentence_lengths: list[int]) -> list[tuple[int, int]]:
    """Ordered pairs (i, j), i != j, of *spans* in the same sentence."""
    ends, total = [], 0
    for n in sentence_lengths:
        total += n
        ends.append(total)

    def sentence(word: int) -> int:
        return next(k for k, end in enumerate(ends) if word < end)

    where = [sentence(s) for s, _ in spans]
    return [(i, j) for i in range(len(spans)) for j in range(len(spans)) if i != j and where[i] == where[j]]
