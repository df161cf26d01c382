"""The co-occurrence edges added after the graph is built (`kg.graph.build.add_cooccurrence`, as `kg.build` adds them
once it has dropped its inputs): the very graph `build_graph` makes with them, edge data and adjacency order too."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from kg.concepts.model import Concept, ConceptIndex
from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
from kg.graph.build import add_cooccurrence, build_graph
from kg.text.sources import Paper, Source


def inputs(seed: int, papers: int = 80, concepts: int = 40):
    rng = random.Random(seed)
    ids = [f"p{i:015d}" for i in range(papers)]
    chosen = {pid: rng.sample(range(concepts), rng.randint(0, 7)) for pid in ids}
    records = [Paper(pid, f"About {pid}.", f"About {pid}.", venue=rng.choice([None, "ICML", "NeurIPS"]), year=2024,
                     sources=(Source("t.txt", paragraph=k),)) for k, pid in enumerate(ids, start=1)]
    found = [PaperKeyphrases(pid, tuple(Keyphrase(f"phrase {c}", 0.9 - 0.1 * r, r) for r, c in enumerate(cs, start=1)))
             for pid, cs in chosen.items()]
    assignment = {(pid, f"phrase {c}"): f"c{c:02d}" for pid, cs in chosen.items() for c in cs}
    made = tuple(Concept(f"c{c:02d}", f"c{c:02d}", f"concept {c}", (),
                         tuple(sorted(p for p, cs in chosen.items() if c in cs)),
                         (f"c{c // 2:02d}",) if c % 5 == 0 and c else ())
                 for c in range(concepts))
    return records, found, ConceptIndex(made, assignment), {pid: pid for pid in ids}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_co_occurrences_added_later_make_the_graph_build_graph_makes(seed):
    whole = build_graph(*inputs(seed))
    later = build_graph(*inputs(seed), cooccurrence=False)
    assert not any(d.get("kind") == "cooccurs" for _, _, d in later.edges(data=True))
    add_cooccurrence(later)
    cooccurs = [d for _, _, d in whole.edges(data=True) if d.get("kind") == "cooccurs"]
    assert len(cooccurs) > 100 and any(d["related"] for d in cooccurs)
    assert nx.node_link_data(later, edges="links") == nx.node_link_data(whole, edges="links")
    assert [list(later.adj[n]) for n in later] == [list(whole.adj[n]) for n in whole]  # each node's neighbours in order
