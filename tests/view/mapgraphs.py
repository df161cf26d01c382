"""Test graphs for the map page (with map positions, tests/map_layout.py) and a check of label boxes."""

from __future__ import annotations

import random

import networkx as nx
from map_layout import with_map

HOSTILE = (
    "We attack <script>window.__pwned = 1</script> the viewer with "
    '<img src=x onerror="window.__pwned=2"> and quotes " \' """ and back\\slashes \\u003c '
    "and other scripts: 中文 العربية."
)


def small_graph() -> nx.Graph:
    """3 papers, 4 concepts, 1 venue, as docs/model.md describes them, with hostile texts."""
    G = nx.Graph(base_iri="https://example.org/kg/", model="test", settings={}, extractor="test")
    papers = {
        "paper:p000000000000001": ("Federated adversarial learning", "ICML", 2026,
                                   "Federated Adversarial Learning enhances model robustness. " * 12),
        "paper:p000000000000002": ("Hostile </script> paper", "ICML", 2025, HOSTILE),
        "paper:p000000000000003": ("Graph 中文 العربية", None, None, "A short abstract."),
    }
    for pid, (label, venue, year, abstract) in papers.items():
        G.add_node(pid, kind="paper", label=label, title=None, abstract=abstract, text=abstract,
                   venue=venue, year=year, urls=[], sources=[f"seeds/x.txt#paragraph={pid[-1]}"],
                   source_id=None)
    concepts = {
        "concept:federated-learning": ("federated learning", ["FL", "federated training"]),
        "concept:adversarial-training": ("adversarial training", []),
        "concept:xss": ("<img src=x onerror=\"window.__pwned=3\">", ["</script><script>window.__pwned=4</script>"]),
        "concept:graphs": ("graphs", ["图"]),
    }
    for cid, (label, alt) in concepts.items():
        G.add_node(cid, kind="concept", label=label, alt_labels=sorted(alt), papers=0, broader=[])
    G.nodes["concept:adversarial-training"]["broader"] = ["concept:federated-learning"]
    G.add_node("venue:icml", kind="venue", label="ICML")
    subjects = [
        ("paper:p000000000000001", "concept:federated-learning", 0.8123, 1, "federated learning"),
        ("paper:p000000000000001", "concept:adversarial-training", 0.6, 2, "adversarial training"),
        ("paper:p000000000000002", "concept:xss", 0.5, 1, "<b>bold</b>"),
        ("paper:p000000000000002", "concept:federated-learning", 0.4, 2, "FL"),
        ("paper:p000000000000003", "concept:graphs", 0.7, 1, "graph"),
    ]
    for pid, cid, score, rank, phrase in subjects:
        G.add_edge(pid, cid, kind="subject", score=score, rank=rank, phrase=phrase)
        G.nodes[cid]["papers"] += 1
    G.add_edge("paper:p000000000000001", "venue:icml", kind="venue", year=2026)
    G.add_edge("paper:p000000000000002", "venue:icml", kind="venue", year=2025)
    G.add_edge("concept:federated-learning", "concept:adversarial-training", kind="cooccurs", count=1, association=0.7071)
    G.add_edge("concept:federated-learning", "concept:xss", kind="cooccurs", count=1, association=0.7071)
    G.add_edge("concept:federated-learning", "concept:graphs", kind="cooccurs", count=2, association=0.8165, related=True)
    return with_map(G)


def big_graph(n_papers: int = 400, n_concepts: int = 250, *, laid_out: bool = True) -> nx.Graph:
    """Papers of 5 concepts each, over 3 venues and 8 years, with co-occurrence edges, laid out
    unless not *laid_out*."""
    G = nx.Graph(base_iri="https://example.org/kg/")
    for c in range(n_concepts):
        G.add_node(f"concept:c{c}", kind="concept", label=f"concept {c}", alt_labels=[f"alias {c}"], papers=0, broader=[])
    venues = ["NeurIPS", "ICML", "ICLR"]
    rnd = random.Random(7)  # papers pick concepts with a long tail, in 7 overlapping groups
    for v in venues:
        G.add_node(f"venue:{v.lower()}", kind="venue", label=v)
    pairs: dict[tuple[str, str], int] = {}
    for p in range(n_papers):
        pid = f"paper:p{p:015x}"
        venue = venues[p % 3]
        G.add_node(pid, kind="paper", label=f"paper {p}", title=f"The title of paper {p}", abstract=f"Abstract {p}. " * 20,
                   text="", venue=venue, year=2018 + p % 8, urls=[], sources=[], source_id=None)
        G.add_edge(pid, f"venue:{venue.lower()}", kind="venue", year=2018 + p % 8)
        mine = sorted({min(int(rnd.paretovariate(0.8)) - 1 + (p % 7) * n_concepts // 7, n_concepts - 1) % n_concepts
                       for _ in range(5)})
        for rank, c in enumerate(mine, 1):
            G.add_edge(pid, f"concept:c{c}", kind="subject", score=round(0.9 - rank / 10, 4), rank=rank, phrase=f"concept {c}")
            G.nodes[f"concept:c{c}"]["papers"] += 1
        for i, a in enumerate(mine):
            for b in mine[i + 1:]:
                pairs[(f"concept:c{a}", f"concept:c{b}")] = pairs.get((f"concept:c{a}", f"concept:c{b}"), 0) + 1
    for (a, b), k in sorted(pairs.items()):
        G.add_edge(a, b, kind="cooccurs", count=k, association=round(k / (G.nodes[a]["papers"] * G.nodes[b]["papers"]) ** 0.5, 4),
                   related=k >= 2)
    return with_map(G) if laid_out else G


def overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """The pairs of label boxes (screen pixels) that overlap."""
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]:
                out.append((a["text"], b["text"]))
    return out
