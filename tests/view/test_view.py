"""kg.view: the map page (graph.html), checked as text and in Debian's headless Chromium with every
request but the page's own refused."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path

import networkx as nx
import pytest
from map_layout import with_map
from mapgraphs import HOSTILE, big_graph, overlapping, small_graph

from kg.view.mapdata import MapSettings, map_payload
from kg.view.mapdata import _shorten as shorten
from kg.view.page import SCRIPTS, render_html


class _ScriptParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._open = False
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._open = True
            self.scripts.append((dict(attrs), ""))
        self._in_title = tag == "title"

    def handle_data(self, data):
        if self._open:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        elif self._in_title:
            self.title += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._open = False
        self._in_title = False


def _parse(page: str) -> _ScriptParser:
    parser = _ScriptParser()
    parser.feed(page)
    parser.close()
    return parser


def _data(page: str) -> dict:
    blocks = [text for attrs, text in _parse(page).scripts if attrs.get("id") == "kg-data"]
    assert len(blocks) == 1, "no kg-data block"
    return json.loads(blocks[0])


# ---------------------------------------------------------------- pure Python


def test_render_is_deterministic_and_independent_of_insertion_order() -> None:
    G = small_graph()
    first = render_html(G, title="kg test")
    assert render_html(G, title="kg test") == first
    H = nx.Graph()
    H.graph.update(G.graph)
    H.add_nodes_from(reversed(list(G.nodes(data=True))))
    H.add_edges_from(reversed(list(G.edges(data=True))))
    assert render_html(H, title="kg test") == first


def test_page_references_nothing_remote() -> None:
    page = render_html(small_graph())
    remote = re.compile(r"""(?:\bsrc|\bhref)\s*=\s*["']?\s*(?:[a-z]+:)?//|url\(\s*["']?\s*(?:[a-z]+:)?//""", re.IGNORECASE)
    assert remote.findall(page) == []
    assert re.search(r"<script[^>]*\bsrc\s*=", page, re.IGNORECASE) is None
    assert re.search(r"<link\b", page, re.IGNORECASE) is None
    assert "@import" not in page
    assert "cdnjs" not in page and "jsdelivr" not in page
    assert "vis.Network" in page  # the library is inlined, not fetched


def test_hostile_text_stays_data() -> None:
    page = render_html(small_graph(), title='<script>window.__pwned = 5</script> "kg" 中文')
    assert "<script>window.__pwned" not in page
    assert "<img src=x" not in page
    parsed = _parse(page)
    # An HTML parser finds exactly our script elements: the data, vis-network, then kg's own files.
    assert [attrs for attrs, _ in parsed.scripts] == [{"type": "application/json", "id": "kg-data"}] + [{}] * (1 + len(SCRIPTS))
    assert len(re.findall(r"</script", page, re.IGNORECASE)) == 2 + len(SCRIPTS)
    assert parsed.title == '<script>window.__pwned = 5</script> "kg" 中文'
    # The texts arrive unchanged, as plain strings, in the data.
    data = _data(page)
    assert data["title"] == '<script>window.__pwned = 5</script> "kg" 中文'
    P, C = data["papers"], data["concepts"]
    assert P["abstract"][P["id"].index("paper:p000000000000002")] == " ".join(HOSTILE.split())
    assert P["label"][P["id"].index("paper:p000000000000002")] == "Hostile </script> paper"
    xss = C["id"].index("concept:xss")
    assert C["label"][xss] == '<img src=x onerror="window.__pwned=3">'
    assert C["alt"][xss] == ["</script><script>window.__pwned=4</script>"]


def test_the_payload_holds_the_map_and_every_node() -> None:
    G = small_graph()
    data = map_payload(G, title="t")
    C, P = data["concepts"], data["papers"]
    assert sorted(C["id"]) == sorted(n for n, k in G.nodes(data="kind") if k == "concept")
    assert sorted(P["id"]) == sorted(n for n, k in G.nodes(data="kind") if k == "paper")
    # Concepts in rank order (papers, then label): federated learning (2 papers) first.
    assert C["id"][0] == "concept:federated-learning" and C["papers"][0] == 2
    assert [C["papers"][i] for i in range(len(C["id"]))] == sorted(C["papers"], reverse=True)
    # Every concept with a position is drawn, in rank order; their positions and clusters are the graph's.
    assert data["drawn"] == [i for i, c in enumerate(C["id"]) if "x" in G.nodes[c]]
    for k, i in enumerate(data["drawn"]):
        d = G.nodes[C["id"][i]]
        assert (data["placed"]["x"][k], data["placed"]["y"][k], data["placed"]["cluster"][k]) == (d["x"], d["y"], d["cluster"])
    assert [c["id"] for c in data["clusters"]] == [c["id"] for c in G.graph["clusters"]]
    # Links: the related pair first; each as [a, b, papers shared, related].
    fl, graphs = C["id"].index("concept:federated-learning"), C["id"].index("concept:graphs")
    assert data["links"][:4] == [min(fl, graphs), max(fl, graphs), 2, 1]
    assert len(data["links"]) == 4 * 3
    assert [C["id"][j] for j in data["related"][fl]] == ["concept:graphs"]
    # Broader links as indexes.
    assert [C["id"][j] for j in C["broader"][C["id"].index("concept:adversarial-training")]] == ["concept:federated-learning"]
    # A paper's concepts by rank, with scores.
    p1 = P["id"].index("paper:p000000000000001")
    assert [C["id"][j] for j in P["concepts"][p1][::2]] == ["concept:federated-learning", "concept:adversarial-training"]
    assert P["concepts"][p1][1::2] == [0.812, 0.6]


def test_the_payload_is_bounded_and_ranks_generic_concepts_last() -> None:
    G = big_graph(200, 120)
    G.nodes["concept:c0"]["generic"] = True
    data = map_payload(G, settings=MapSettings(max_concepts=50, max_links=30))
    C = data["concepts"]
    assert len(data["drawn"]) == 50 and len(data["links"]) == 4 * 30
    assert C["generic"] == sorted(C["generic"]) and C["generic"][C["id"].index("concept:c0")] == 1
    assert C["id"][data["drawn"][0]] != "concept:c0"
    drawn = set(data["drawn"])
    assert all(a in drawn and b in drawn for a, b in zip(data["links"][::4], data["links"][1::4]))
    counts = data["links"][2::4]
    related = data["links"][3::4]
    assert related == sorted(related, reverse=True)  # related pairs first
    firsts = [k for k, r in zip(counts, related) if r]
    assert firsts == sorted(firsts, reverse=True)


def test_the_payload_carries_the_authors_keywords_only_when_a_paper_has_some() -> None:
    """Each paper's keywords in input order, null for a paper with none; a graph without keywords
    gives no column, so its payload is what it was before keywords (docs/map.md)."""
    plain = map_payload(small_graph())
    assert "keywords" not in plain["papers"]
    G = small_graph()
    G.nodes["paper:p000000000000001"]["keywords"] = ["robustness", "federated learning, FL", "<b>x</b>"]
    P = map_payload(G)["papers"]
    p1, p3 = P["id"].index("paper:p000000000000001"), P["id"].index("paper:p000000000000003")
    assert P["keywords"][p1] == ["robustness", "federated learning, FL", "<b>x</b>"]
    assert P["keywords"][p3] is None and P["keywords"].count(None) == 2
    assert map_payload(G, settings=MapSettings(abstracts="none"))["papers"]["keywords"] == P["keywords"]
    assert {k: v for k, v in P.items() if k != "keywords"} == plain["papers"]


def test_abstracts_are_whole_cut_or_left_to_the_server() -> None:
    G = small_graph()
    whole = map_payload(G)["papers"]
    assert whole["cut"] == 0 and whole["abstract"][0].startswith("Federated Adversarial Learning enhances")
    from kg.view import mapdata

    cut = map_payload(G, settings=MapSettings(abstracts="auto"))["papers"]
    assert cut["abstract"] == whole["abstract"]
    served = map_payload(G, settings=MapSettings(abstracts="none"))["papers"]
    assert served["abstract"] == [None] * 3 and served["served"]
    old = mapdata.WHOLE_ABSTRACTS
    try:
        mapdata.WHOLE_ABSTRACTS = 10
        cut = map_payload(G)["papers"]
    finally:
        mapdata.WHOLE_ABSTRACTS = old
    assert cut["cut"] == mapdata.ABSTRACT_CHARS
    assert all(len(a) <= mapdata.ABSTRACT_CHARS + 1 for a in cut["abstract"]) and cut["abstract"][0].endswith("\u2026")


@pytest.mark.parametrize("whole", [10**9, 10])  # abstracts whole, and cut
def test_one_payload_serves_the_explorer_and_graph_html(monkeypatch, whole) -> None:
    from kg.view import mapdata
    from kg.view.mapdata import with_abstracts

    monkeypatch.setattr(mapdata, "WHOLE_ABSTRACTS", whole)
    G = small_graph()
    served = map_payload(G, title="a", settings=MapSettings(abstracts="none"))
    for abstracts in ("auto", "whole", "none"):
        made = map_payload(G, title="b", settings=MapSettings(abstracts=abstracts))
        derived = with_abstracts(served, G, abstracts, title="b")
        assert json.dumps(derived) == json.dumps(made)  # the same keys in the same order: the same bytes
    assert with_abstracts(served, G, "auto")["title"] == "a" and served["papers"]["abstract"] == [None] * 3


def test_empty_graph_renders() -> None:
    data = _data(render_html(nx.Graph()))
    assert data["concepts"]["id"] == [] and data["papers"]["id"] == [] and data["drawn"] == []


# ---------------------------------------------------------------- browser


@pytest.mark.browser
def test_a_map_of_130000_papers_draws(open_page) -> None:
    """Past ~120,000 positions Math.min.apply threw 'Maximum call stack size exceeded' and the
    200,000-abstract map said it could not be loaded."""
    G = nx.Graph(base_iri="https://example.org/kg/", clusters=[])
    for c in range(3):
        G.add_node(f"concept:c{c}", kind="concept", label=f"concept {c}", papers=2, x=100.0 * c, y=-50.0 * c, cluster=0)
    for p in range(130_000):
        G.add_node(f"paper:p{p:x}", kind="paper", label="", abstract="", x=float(p % 997), y=float(p % 991), cluster=0)
    o = open_page(render_html(G))
    assert o.errors == [] and o.page.evaluate("kgApp.M.nP") == 130_000


@pytest.mark.browser
def test_the_map_draws_offline_labelled_and_still(open_page) -> None:
    o = open_page(render_html(small_graph(), title="kg <test>"))
    page = o.page
    assert o.requests == [o.url] and o.errors == []
    assert page.title() == "kg <test>"
    st = o.state()
    assert (st["concepts"], st["papers"], st["links"]) == (4, 3, 3)
    # Every concept label is on the canvas, at its node, none overlapping; the hostile one as text.
    concepts = {lb["id"]: lb for lb in st["labels"] if lb["kind"] == "concept"}
    assert set(concepts) == {"concept:federated-learning", "concept:adversarial-training", "concept:xss", "concept:graphs"}
    assert concepts["concept:xss"]["text"] == shorten('<img src=x onerror="window.__pwned=3">', 36)
    assert overlapping(st["labels"]) == []
    for cid, lb in concepts.items():
        at = page.evaluate(f"kgMap.screenOf({json.dumps(cid)})")
        assert abs(lb["x"] + lb["w"] / 2 - at["x"]) < 1 and abs(lb["y"] + lb["h"] / 2 - at["y"]) < 1
    # Something is painted; nothing moves (no physics): the same frame after a while.
    painted = page.evaluate("""() => {
        const c = document.querySelector('#kg-map canvas'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < px.length; i += 4) if (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250) n++; return n; }""")
    assert painted > 1000
    before = page.evaluate("kgMap.png()")
    page.wait_for_timeout(400)
    assert page.evaluate("kgMap.png()") == before
    assert page.evaluate("typeof window.__pwned") == "undefined"


@pytest.mark.browser
def test_details_hover_and_search_show_hostile_text_as_text(open_page) -> None:
    o = open_page(render_html(small_graph()))
    page = o.page
    # Hover the hostile paper: its tip shows the markup as text and runs nothing.
    page.evaluate("""() => { const v = kgApp.view, i = kgApp.M.index['paper:p000000000000002'][1];
        kgNetwork.moveTo({position: v.positionOf('paper', i), scale: v.placement.scale(v.paperLabelLevel), animation: false}); }""")
    at = page.evaluate("kgMap.screenOf('paper:p000000000000002')")
    box = page.locator("#kg-map").bounding_box()
    page.mouse.move(box["x"] + at["x"] + 3, box["y"] + at["y"] + 3)
    page.mouse.move(box["x"] + at["x"], box["y"] + at["y"])
    tip = page.locator("#kg-tip")
    tip.wait_for(state="visible", timeout=5_000)
    assert "Hostile </script> paper" in tip.inner_text() and tip.locator("img, script").count() == 0
    # Click it: its details, the abstract as text.
    page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
    page.wait_for_selector('#kg-details[data-node="paper:p000000000000002"]')
    assert page.text_content("#kg-abstract") == " ".join(HOSTILE.split())
    assert page.eval_on_selector("#kg-abstract", "e => e.children.length") == 0
    assert page.locator("#kg-details img, #kg-details script").count() == 0
    listed = page.eval_on_selector_all("#kg-concept-list button", "bs => bs.map(b => b.dataset.id)")
    assert listed == ["concept:xss", "concept:federated-learning"]
    assert "ICML 2025" in page.text_content("#kg-details")
    # A concept: its labels, broader, narrower, related concepts and papers.
    page.click('#kg-concept-list button[data-id="concept:federated-learning"]')
    page.wait_for_selector('#kg-details[data-node="concept:federated-learning"]')
    details = page.text_content("#kg-details")
    assert "also: FL, federated training" in details and "2 papers" in details and "mean year 2025.5" in details
    assert "Narrower (1)" in details and "Related (1)" in details
    assert sorted(page.eval_on_selector_all("#kg-paper-list button", "bs => bs.map(b => b.dataset.id)")) == \
        ["paper:p000000000000001", "paper:p000000000000002"]
    # Search by an alias, an alternative label with markup, a title word, an id: each is found.
    for q, want in (("FL", "concept:federated-learning"), ("</script><script>", "concept:xss"), ("图", "concept:graphs"),
                    ("p000000000000003", "paper:p000000000000003"), ("icml", "venue:icml")):
        page.fill("#kg-search", q)
        page.press("#kg-search", "Enter")
        page.wait_for_selector(f'#kg-details[data-node="{want}"]')
        assert page.evaluate("kgMap.state().selected") == want
        assert page.locator("#kg-search-results script, #kg-search-results img").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined" and o.errors == [] and o.requests == [o.url]



def _with_identifiers(G: nx.Graph) -> nx.Graph:
    """*G* with paper 1's bibliographic attributes as kg.text.records gives them (docs/model.md)."""
    G.nodes["paper:p000000000000001"].update(
        authors=[{"name": "Jane Smith", "orcid": "0000-0002-1825-0097"}, {"name": "Ali <b>Kaya</b>", "orcid": None}],
        doi="10.5555/abc.123", arxiv="2401.01234", journal_ref="J. Mach. Learn. Res. 25 (2024)",
        keywords=["robustness", "federated learning, FL", "<b>x</b>"])
    return G


@pytest.mark.browser
def test_a_papers_details_give_its_authors_keywords_doi_and_arxiv_id(open_page) -> None:
    """Authors by name (an ORCID iD linked), the authors' keywords, the DOI and arXiv id linked to
    their resolvers, the journal reference; a paper without them shows none; DOI, arXiv id and a keyword find the paper."""
    o = open_page(render_html(_with_identifiers(small_graph())))
    page = o.page
    page.evaluate("kgMap.focus('paper:p000000000000001')")
    page.wait_for_selector('#kg-details[data-node="paper:p000000000000001"]')
    details = page.text_content("#kg-details")
    assert "Jane Smith, Ali <b>Kaya</b>" in details and "{" not in details and "orcid" not in details
    assert "J. Mach. Learn. Res. 25 (2024)" in details
    assert page.text_content("#kg-details .kg-keywords") == "Keywords: robustness; federated learning, FL; <b>x</b>"
    links = page.eval_on_selector_all("#kg-details a", "as => as.map(a => [a.textContent, a.href])")
    assert ["Jane Smith", "https://orcid.org/0000-0002-1825-0097"] in links
    assert ["10.5555/abc.123", "https://doi.org/10.5555/abc.123"] in links
    assert ["arXiv:2401.01234", "https://arxiv.org/abs/2401.01234"] in links
    assert page.locator("#kg-details b").count() == 0
    page.evaluate("kgMap.focus('paper:p000000000000003')")
    page.wait_for_selector('#kg-details[data-node="paper:p000000000000003"]')
    assert page.locator("#kg-details .kg-authors, #kg-details .kg-keywords, #kg-details a").count() == 0
    for q in ("10.5555/abc.123", "2401.01234", "Federated learning, FL"):  # (the last an authors' keyword)
        assert page.evaluate("q => kgMap.search(q, 1)[0].id", q) == "paper:p000000000000001"
    assert page.evaluate("q => kgMap.search(q, 1)[0].matched", "federated learning, fl") == "federated learning, FL"
    assert o.errors == [] and o.requests == [o.url]

@pytest.mark.browser
def test_labels_follow_the_zoom_without_overlap(open_page) -> None:
    G = big_graph()
    o = open_page(render_html(G), viewport=(1400, 900))
    page = o.page
    first = o.state()
    assert first["concepts"] == sum(1 for _, d in G.nodes(data=True) if d["kind"] == "concept" and d["papers"]) and first["links"] > 100
    ranked = sorted((n for n, d in G.nodes(data=True) if d["kind"] == "concept"), key=lambda n: (-G.nodes[n]["papers"], G.nodes[n]["label"], n))
    shown = [lb["id"] for lb in first["labels"] if lb["kind"] == "concept"]
    assert ranked[0] in shown and len(shown) >= 20
    centre = page.evaluate(f"kgApp.view.positionOf('concept', kgApp.M.index[{json.dumps(ranked[0])}][1])")
    steps = []
    for factor in (1, 1.3, 1.8, 2.6, 4, 7, 12):
        page.evaluate(f"kgNetwork.moveTo({{position: {json.dumps(centre)}, scale: {first['fitScale']} * {factor}}})")
        page.wait_for_timeout(50)
        st = o.state()
        # At every zoom: no two labels overlap, each sits at its node (on it or just beside it).
        assert overlapping(st["labels"]) == []
        for lb in st["labels"]:
            if lb["kind"] == "cluster":
                continue
            at = page.evaluate(f"kgMap.screenOf({json.dumps(lb['id'])})")
            gap_x = max(lb["x"] - at["x"], at["x"] - lb["x"] - lb["w"], 0)
            gap_y = max(lb["y"] - at["y"], at["y"] - lb["y"] - lb["h"], 0)
            r = page.evaluate(f"kgApp.view.radius[kgApp.M.index[{json.dumps(lb['id'])}][1]] || 2")
            assert max(gap_x, gap_y) <= r + 2, lb
        in_view = page.evaluate("""(() => { const v = kgApp.view, M = kgApp.M, w = v.container.clientWidth, h = v.container.clientHeight;
            return v.sel.ranked.filter(c => { const at = v.screenOf('concept', c); return at.x > 0 && at.x < w && at.y > 0 && at.y < h; })
                               .map(c => M.C.id[c]); })()""")
        steps.append((set(in_view), {lb["id"] for lb in st["labels"] if lb["kind"] == "concept"}))
    # Lower-ranked labels come in as the view zooms in: of the concepts still in view after a
    # step, more are labelled than before it.
    for (_, before), (view, after) in pairwise(steps):
        assert len(after & view) >= len(before & view), (len(before & view), len(after & view))
    assert len(steps[-1][1] & steps[-1][0]) > len(steps[0][1] & steps[-1][0])
    assert any(lb["kind"] == "paper" for lb in st["labels"])  # paper labels come with zoom


@pytest.mark.browser
def test_each_level_is_placed_greedily_by_rank(open_page) -> None:
    """kg.labels itself, on random labels: at every level no two placed labels overlap anywhere
    between its scale and the next level's, and every label left out overlaps, at each of its
    places, a label placed before it (checked at scales through the level)."""
    o = open_page(render_html(small_graph()))
    bad = o.page.evaluate("""() => {
      let seed = 7; const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      const items = [];
      for (let i = 0; i < 400; i++) items.push({x: rnd() * 1000 - 500, y: rnd() * 1000 - 500, w: 20 + rnd() * 120,
                                                h: 12 + rnd() * 10, r: rnd() < 0.2 ? 0 : 2 + rnd() * 8, from: 0, upto: Infinity});
      const P = new kg.labels.Placement(items, 0.2, 20, 5), problems = [];
      const px = kg.labels.PAD / 2, py = kg.labels.VPAD / 2;  /* the room kept around a label */
      const box = (i, o, s) => { const it = items[i]; return [it.x * s + o[0] - it.w / 2 - px, it.y * s + o[1] - it.h / 2 - py,
                                                                it.x * s + o[0] + it.w / 2 + px, it.y * s + o[1] + it.h / 2 + py]; };
      const hit = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
      for (let L = 0; L < 20; L++) {
        const at = P.at(L), rank = {};
        at.order.forEach((i, k) => rank[i] = k);
        const scales = [0, 0.2, 0.4, 0.6, 0.8, 0.999].map(t => P.scale(L) * Math.pow(1.25, t));
        for (const s of scales) for (let a = 0; a < at.order.length; a++) for (let b = a + 1; b < at.order.length; b++) {
          const i = at.order[a], j = at.order[b];
          if (hit(box(i, at.place[i], s), box(j, at.place[j], s))) problems.push(['overlap', L, i, j]);
        }
        for (let i = 0; i < items.length; i++) {
          if (i in at.place) continue;
          const g = kg.labels.GAP, it = items[i], places = it.r ? [[0, 0], [0, it.r + it.h / 2 + g], [0, -(it.r + it.h / 2 + g)],
                                                [it.r + it.w / 2 + g, 0], [-(it.r + it.w / 2 + g), 0]] : [[0, 0]];
          for (const o of places) {
            const blocked = at.order.some(j => j < i && scales.concat([P.scale(L + 1) * 0.9999]).some(s => hit(box(i, o, s), box(j, at.place[j], s))));
            if (!blocked) problems.push(['left out', L, i, o]);
          }
        }
      }
      return [problems.slice(0, 5), P.at(19).order.length > P.at(5).order.length];
    }""")
    assert bad == [[], True]


@pytest.mark.browser
def test_overlays_recolour_the_map_and_the_legend_matches(open_page) -> None:
    G = big_graph()
    o = open_page(render_html(G))
    page = o.page
    ids = ["concept:c0", "concept:c7", "concept:c100", "paper:p000000000000005"]
    by_cluster = page.evaluate(f"kgMap.colorsOf({json.dumps(ids)})")
    legend = page.evaluate("kgMap.legend()")
    # Cluster legend: one entry per cluster, its name and the colour its concepts have.
    assert [i["label"] for i in legend["items"]] == [c["label"] for c in G.graph["clusters"]]
    colour_of = {i["cluster"]: i["color"] for i in legend["items"]}
    assert by_cluster[0] == colour_of[G.nodes["concept:c0"]["cluster"]]
    shown = page.eval_on_selector_all("#kg-legend-body li", "ls => ls.map(l => [l.textContent, l.dataset.color])")
    assert shown[0][0].startswith(G.graph["clusters"][0]["label"]) and shown[0][1] == legend["items"][0]["color"]
    # By mean year: other colours, a scale from the earliest to the latest mean year.
    page.select_option("#kg-color", "year")
    by_year = page.evaluate(f"kgMap.colorsOf({json.dumps(ids)})")
    legend = page.evaluate("kgMap.legend()")
    means = page.evaluate("(() => { const M = kgApp.M; return M.drawn.map(i => M.C.year[i]).filter(y => y !== null); })()")
    means.sort()  # the scale spans the middle 90 % of the drawn concepts' mean years
    assert legend["kind"] == "scale"
    assert (legend["from"], legend["to"]) == (means[int(0.05 * (len(means) - 1))], means[math.ceil(0.95 * (len(means) - 1))])
    assert by_year != by_cluster and str(int(legend["from"])) in page.text_content("#kg-legend-body")
    # By venue: the venues, each with its colour; a paper has its venue's colour.
    page.select_option("#kg-color", "venue")
    by_venue = page.evaluate(f"kgMap.colorsOf({json.dumps(ids)})")
    legend = page.evaluate("kgMap.legend()")
    venue_colour = {i["label"]: i["color"] for i in legend["items"]}
    assert {"NeurIPS", "ICML", "ICLR"} <= set(venue_colour)
    assert by_venue[3] == venue_colour[G.nodes["paper:p000000000000005"]["venue"]]
    assert by_venue != by_year
    assert o.errors == []


@pytest.mark.browser
def test_filters_leave_what_they_say(open_page) -> None:
    G = big_graph()
    o = open_page(render_html(G))
    page = o.page
    total = o.state()["concepts"]

    def drawn() -> tuple[list[str], list[str]]:
        return page.evaluate("""(() => { const v = kgApp.view, M = kgApp.M;
            return [v.sel.ranked.map(i => M.C.id[i]), v.papers.map(i => M.P.id[i])]; })()""")

    venue = page.evaluate("kgApp.M.V.label.indexOf('ICML')")
    page.select_option("#kg-venue", str(venue))
    page.click("#kg-apply")
    concepts, papers = drawn()
    assert papers and all(G.nodes[p]["venue"] == "ICML" for p in papers)
    at_icml = [c for c in G if c.startswith("concept:") and any(G.nodes[p].get("venue") == "ICML" for p in G[c] if p.startswith("paper:"))]
    assert sorted(concepts) == sorted(at_icml) and len(papers) == sum(1 for p in G if G.nodes[p].get("venue") == "ICML")
    page.click("#kg-filter-reset")
    assert len(drawn()[0]) == total
    st = page.evaluate("kgMap.setFilters({yearFrom: 2020, yearTo: 2021})")
    concepts, papers = drawn()
    assert papers and all(2020 <= G.nodes[p]["year"] <= 2021 for p in papers) and st["concepts"] == len(concepts)
    page.evaluate("kgMap.setFilters({minPapers: 9})")
    concepts, _ = drawn()
    assert concepts and all(G.nodes[c]["papers"] >= 9 for c in concepts)
    cluster = G.graph["clusters"][1]["id"]
    page.evaluate(f"kgMap.setFilters({{cluster: {cluster}}})")
    concepts, papers = drawn()
    assert concepts and all(G.nodes[c]["cluster"] == cluster for c in concepts)
    assert all(G.nodes[p]["cluster"] == cluster for p in papers)
    st = o.state()
    assert overlapping(st["labels"]) == []
    assert {lb["id"] for lb in st["labels"] if lb["kind"] == "concept"} <= set(concepts)
    page.evaluate("kgMap.setFilters({minPapers: 1000})")
    assert drawn()[0] == [] and page.is_visible("#kg-note")
    assert "No concept on the map matches these filters." in page.text_content("#kg-note")
    assert o.errors == []


@pytest.mark.browser
def test_the_current_view_saves_as_png(open_page) -> None:
    o = open_page(render_html(small_graph(), title="kg: test"))
    with o.page.expect_download() as caught:
        o.page.click("#kg-png")
    download = caught.value
    assert download.suggested_filename == "kg-test-map.png"
    assert Path(download.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert o.requests == [o.url]


def _one_paper() -> nx.Graph:
    G = nx.Graph()
    G.add_node("paper:p1", kind="paper", label="Alone", title=None, abstract="Only one.", venue=None, year=None, urls=[])
    G.add_node("concept:a", kind="concept", label="alone", alt_labels=[], papers=1, broader=[])
    G.add_edge("paper:p1", "concept:a", kind="subject", score=0.5, rank=1, phrase="alone")
    return with_map(G)


def _no_concepts() -> nx.Graph:
    G = nx.Graph()
    for i in range(3):
        G.add_node(f"paper:p{i}", kind="paper", label=f"Paper {i}", title=None, abstract="No keyphrase here.", venue=None, year=2020)
    return G


def _odd_texts() -> nx.Graph:
    G = big_graph(30, 20)
    G.nodes["concept:c0"]["label"] = "ب" * 250 + " long " + "x" * 250  # 500 characters, right to left then left to right
    G.nodes["concept:c1"]["label"] = "שלום עולם"
    G.nodes["concept:c2"]["label"] = "zero\u200bwidth\u200d\ufeffjoin"
    G.nodes["concept:c3"]["label"] = "</script><script>window.__pwned=1</script>"
    G.nodes["paper:p" + "0" * 15]["abstract"] = "</script><img src=x onerror=window.__pwned=2>"
    G.graph["clusters"][0]["label"] = "</script>\u202e cluster"
    G.graph["clusters"][1]["label"] = "ب" * 250 + " / " + "y" * 250  # a cluster named by concepts of long labels
    G.graph["clusters"].append({"id": 99, "label": "a cluster of one", "concepts": 1, "papers": 1, "top": ["concept:c4"],
                                "x": 0.0, "y": 0.0})
    G.nodes["concept:c4"]["cluster"] = 99
    return G


@pytest.mark.browser
@pytest.mark.parametrize("graph, note", [
    (nx.Graph, "Nothing to draw: this graph has no papers and no concepts."),
    (_one_paper, None),
    (_no_concepts, "Nothing to draw: the 3 papers of this graph have no concepts."),
    (_odd_texts, None),
    (lambda: big_graph(20, 10, laid_out=False), "no concept of this graph has a place on the map"),
], ids=["empty", "one paper", "no concepts", "odd texts", "no positions"])
def test_bad_input_gives_a_working_page(open_page, graph, note) -> None:
    o = open_page(render_html(graph()))
    page = o.page
    assert o.errors == [] and o.requests == [o.url]
    if note:
        assert page.is_visible("#kg-note") and note in page.text_content("#kg-note")
    else:
        assert not page.is_visible("#kg-note")
        assert o.state()["labels"] and overlapping(o.state()["labels"]) == []
    page.fill("#kg-search", "p")
    page.press("#kg-search", "Enter")
    page.wait_for_timeout(100)
    assert page.evaluate("typeof window.__pwned") == "undefined" and o.errors == []


@pytest.mark.browser
def test_odd_texts_are_drawn_as_text(open_page) -> None:
    o = open_page(render_html(_odd_texts()))
    labels = {lb["id"]: lb["text"] for lb in o.state()["labels"]}
    page = o.page
    page.evaluate("kgMap.focus('concept:c3')")
    page.wait_for_selector('#kg-details[data-node="concept:c3"]')
    assert page.text_content("#kg-details h2").endswith("</script><script>window.__pwned=1</script>")
    long_label = labels.get("concept:c0")
    if long_label is not None:
        assert len(long_label) <= 37 and long_label.endswith("\u2026")
    named = page.eval_on_selector_all("#kg-legend-body li span:nth-child(2)", "ss => ss.map(s => [s.textContent, s.title])")
    long_name = [(text, full) for text, full in named if full.startswith("ب" * 250)]
    assert len(long_name) == 1 and len(long_name[0][0]) <= 121 and long_name[0][0].endswith("\u2026")
    page.evaluate("kgMap.focus('paper:p" + "0" * 15 + "')")
    page.wait_for_selector("#kg-abstract")
    assert page.text_content("#kg-abstract") == "</script><img src=x onerror=window.__pwned=2>"
    assert page.evaluate("typeof window.__pwned") == "undefined" and o.errors == []


# ---------------------------------------------------------------- hostile text, any

from hostile_text import HOSTILE_TEXT, with_text
from hypothesis import given, settings


@settings(max_examples=40, deadline=None)
@given(text=HOSTILE_TEXT)
def test_the_page_and_the_explorers_map_hold_any_text_as_data(text) -> None:
    """Whatever a label holds (</script>, <!--, U+2028, a lone surrogate), the page's data block is
    the only text of its script element, parses as JSON and gives the text back; the explorer's
    /api/map is UTF-8 JSON (a lone surrogate failed to encode: U+FFFD now)."""
    from kg.text.chars import encodable
    from kg.view.explorer import Explorer

    G = with_text(small_graph(), text)
    page = render_html(G, title=text)
    page.encode("utf-8")
    parsed = _parse(page)
    assert [attrs for attrs, _ in parsed.scripts] == [{"type": "application/json", "id": "kg-data"}] + [{}] * (1 + len(SCRIPTS))
    data = _data(page)
    back = json.loads(json.dumps(text))  # JSON's escapes of a surrogate pair read back as one character
    assert data["title"] == back and back in data["papers"]["label"]
    served = json.loads(Explorer(G, title=text).map_json().decode("utf-8"))
    assert encodable(text) == served["title"]
