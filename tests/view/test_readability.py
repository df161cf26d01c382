"""The bar of issue 20 on the seeds: a 1600x1000 screenshot of graph.html's first view, read by
tesseract label by label where the page draws them (kg.evaluation.maps.read_labels), shows >= 20
concept labels at their nodes, >= 10 of them among the 30 concepts with the most papers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.evaluation.maps import OnScreen, read_labels, read_words, readable_labels
from kg.view.page import render_html

NODES = """() => { const M = kgApp.M, v = kgApp.view, r = document.getElementById('kg-map').getBoundingClientRect();
  const drawn = {}; v.labelsDrawn.forEach(l => { if (l.kind === 'concept') drawn[l.index] = l; });
  const out = [];
  for (let i = 0; i < M.nC; i++) { const at = v.screenOf('concept', i); if (!at) continue; const l = drawn[i];
    out.push([M.C.id[i], l ? l.text : M.C.label[i], (l ? l.x + l.w / 2 : at.x) + r.left, (l ? l.y + l.h / 2 : at.y) + r.top, l ? l.w : 0, l ? l.h : 0]); }
  return {region: [r.left, r.top, r.right, r.bottom], nodes: out,
          drawn: v.labelsDrawn.filter(l => l.kind === 'concept').map(l => M.C.id[l.index])}; }"""


def test_ocr_reads_a_label_where_it_is_drawn_only(tmp_path: Path, open_page) -> None:
    """The readers themselves: a label is read at its place, and not credited to a place elsewhere."""
    import shutil

    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is missing: `apt-get install -y tesseract-ocr` (make install-test does it)", pytrace=False)
    html = ('<body style="margin:0;font:600 18px sans-serif"><div style="position:absolute;left:100px;top:100px">'
            'stochastic gradient descent</div><div style="position:absolute;left:600px;top:400px">graph neural networks</div>'
            '<div style="position:absolute;left:600px;top:500px;font-size:5px">tiny words here</div></body>')
    o = open_page(html, name="t.html", ready="true")
    shot = tmp_path / "t.png"
    o.page.screenshot(path=str(shot))
    boxes = o.page.evaluate("[...document.querySelectorAll('div')].map(d => { const r = d.getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2, r.width, r.height]; })")
    (ax, ay, aw, ah), (bx, by, bw, bh), (tx, ty, tw, th) = boxes
    nodes = [OnScreen("a", "stochastic gradient descent", ax, ay), OnScreen("b", "graph neural networks", ax, by),
             OnScreen("c", "graph neural networks", bx, by)]
    assert readable_labels(read_words(shot), nodes) == ["a", "c"]
    cuts = [OnScreen("a", "stochastic gradient descent", ax, ay, aw, ah), OnScreen("b", "graph neural networks", ax, by, bw, bh),
            OnScreen("c", "graph neural networks", bx, by, bw, bh), OnScreen("d", "stochastic gradient descent", bx, by, bw, bh),
            OnScreen("e", "tiny words here", tx, ty, tw, th)]
    assert read_labels(shot, cuts) == ["a", "c"]


@pytest.mark.model
@pytest.mark.browser
def test_the_seeds_map_is_readable_at_first_sight(seeds_build, open_page, tmp_path: Path) -> None:
    G = seeds_build.graph
    placed = sum(1 for _, d in G.nodes(data=True) if d.get("kind") == "concept" and "x" in d)
    assert placed >= 20, f"kg build placed {placed} concepts on the seeds map, fewer than the bar's 20 labels"
    o = open_page(render_html(G, title="kg: seeds"), viewport=(1600, 1000))
    shot = tmp_path / "seeds.png"
    o.page.screenshot(path=str(shot))
    info = o.page.evaluate(NODES)
    drawn = [OnScreen(*n) for n in info["nodes"] if n[4]]
    read = read_labels(shot, drawn)
    sparse = readable_labels(read_words(shot), [OnScreen(*n) for n in info["nodes"]], region=tuple(info["region"]))
    top = [c for *_, c in sorted((-(d.get("papers") or 0), str(d["label"]).lower(), c)
                                 for c, d in G.nodes(data=True) if d.get("kind") == "concept")[:30]]
    found = {"read": len(read), "top 30 read": len(set(read) & set(top)), "drawn": len(drawn),
             "top 30 drawn": len(set(info["drawn"]) & set(top)), "read in the whole screenshot": len(sparse)}
    assert found["read"] >= 20 and found["top 30 read"] >= 10, found
    assert o.errors == [] and o.requests == [o.url]
