"""kg.view.page: the offline HTML page, checked as text and in Debian's headless Chromium."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import pytest

from kg.view.page import render_html

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
HOSTILE = (
    "We attack <script>window.__pwned = 1</script> the viewer with "
    '<img src=x onerror="window.__pwned=2"> and quotes " \' """ and back\\slashes \\u003c '
    "and other scripts: 中文 العربية."
)


def _graph() -> nx.Graph:
    """A small graph as docs/model.md describes it: 3 papers, 4 concepts, 1 venue."""
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
    G.add_edge("concept:federated-learning", "concept:adversarial-training", kind="cooccurs", count=1)
    G.add_edge("concept:federated-learning", "concept:graphs", kind="cooccurs", count=2, association=0.8165, related=True)
    return G


N_DRAWN_NODES = 8  # 3 papers + 4 concepts + 1 venue
N_DRAWN_EDGES = 8  # 5 subject + 2 venue + 1 related; the plain cooccurs edge is left out


class _ScriptParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._open = dict(attrs)
            self.scripts.append((self._open, ""))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def _scripts(page: str) -> list[tuple[dict[str, str | None], str]]:
    """(attributes, text) of every script element, as an HTML parser sees them."""
    parser = _ScriptParser()
    parser.feed(page)
    parser.close()
    return parser.scripts


def _data(page: str) -> dict:
    blocks = [text for attrs, text in _scripts(page) if attrs.get("id") == "kg-data"]
    assert len(blocks) == 1, "no kg-data block"
    return json.loads(blocks[0])


# ---------------------------------------------------------------- pure Python


def test_render_is_deterministic_and_independent_of_insertion_order() -> None:
    G = _graph()
    first = render_html(G, title="kg test")
    assert render_html(G, title="kg test") == first
    H = nx.Graph(G.graph)
    H.add_nodes_from(reversed(list(G.nodes(data=True))))
    H.add_edges_from(reversed(list(G.edges(data=True))))
    assert render_html(H, title="kg test") == first


def test_page_references_nothing_remote() -> None:
    page = render_html(_graph())
    remote = re.compile(r"""(?:\bsrc|\bhref)\s*=\s*["']?\s*(?:[a-z]+:)?//|url\(\s*["']?\s*(?:[a-z]+:)?//""", re.I)
    assert remote.findall(page) == []
    assert re.search(r"<script[^>]*\bsrc\s*=", page, re.I) is None
    assert re.search(r"<link\b", page, re.I) is None
    assert "@import" not in page
    assert "cdnjs" not in page and "jsdelivr" not in page
    assert "vis.Network" in page  # the library is inlined, not fetched


def test_hostile_text_stays_data() -> None:
    page = render_html(_graph(), title='<script>window.__pwned = 5</script> "kg" 中文')
    assert "<script>window.__pwned" not in page
    assert "<img src=x" not in page
    # An HTML parser finds exactly our three script elements (data, vis-network, page script).
    assert [attrs for attrs, _ in _scripts(page)] == [{"type": "application/json", "id": "kg-data"}, {}, {}]
    assert len(re.findall(r"</script", page, re.I)) == 3
    assert "&lt;script&gt;window.__pwned = 5&lt;/script&gt; &quot;kg&quot; &#20013;&#25991;" in page
    # The texts arrive unchanged (as plain text) in the data.
    data = _data(page)
    tips = {n["id"]: n["title"] for n in data["nodes"]}
    hostile_tip = tips["paper:p000000000000002"]
    assert "<script>window.__pwned = 1</script>" in hostile_tip
    assert '<img src=x onerror="window.__pwned=2">' in hostile_tip
    assert "\\slashes \\u003c" in hostile_tip and "中文 العربية" in hostile_tip
    assert "</script><script>window.__pwned=4</script>" in tips["concept:xss"]


def test_drawn_nodes_edges_and_tooltips() -> None:
    data = _data(render_html(_graph()))
    nodes = {n["id"]: n for n in data["nodes"]}
    assert len(nodes) == N_DRAWN_NODES and len(data["edges"]) == N_DRAWN_EDGES
    assert {n["shape"] for n in nodes.values()} == {"square", "dot", "diamond"}
    assert nodes["paper:p000000000000001"]["shape"] == "square"
    assert nodes["concept:graphs"]["shape"] == "dot"
    assert nodes["venue:icml"]["shape"] == "diamond"
    # Sized by degree: federated learning (2 papers) is bigger than graphs (1 paper).
    assert nodes["concept:federated-learning"]["size"] > nodes["concept:graphs"]["size"]
    paper_tip = nodes["paper:p000000000000001"]["title"].split("\n")
    assert paper_tip[0] == "Federated adversarial learning"
    assert "ICML 2026" in paper_tip
    abstract_line = paper_tip[2]
    assert abstract_line.startswith("Federated Adversarial Learning enhances")
    assert len(abstract_line) <= 301 and abstract_line.endswith("\u2026")
    concept_tip = nodes["concept:federated-learning"]["title"].split("\n")
    assert concept_tip == ["federated learning", "also: FL, federated training", "2 papers"]
    assert data["options"]["layout"]["randomSeed"] == 42
    assert data["options"]["physics"]["stabilization"]["iterations"] == 200
    related = [e for e in data["edges"] if "related to" in e.get("title", "")]
    assert len(related) == 1 and {related[0]["from"], related[0]["to"]} == {"concept:federated-learning", "concept:graphs"}
    assert related[0]["title"].endswith("2 papers share both (association 0.8165)")
    assert not any({e["from"], e["to"]} == {"concept:federated-learning", "concept:adversarial-training"} for e in data["edges"])


def test_empty_graph_renders() -> None:
    data = _data(render_html(nx.Graph()))
    assert data["nodes"] == [] and data["edges"] == []


# ---------------------------------------------------------------- browser


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`make test` does, "
                    "or `apt-get install -y chromium`)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def _open(browser, path: Path):
    """Open `path` with every other request refused; returns (page, problems dict)."""
    url = path.as_uri()
    problems: dict[str, list[str]] = {"requests": [], "failed": [], "errors": [], "console": []}
    context = browser.new_context(viewport={"width": 1200, "height": 800}, service_workers="block")
    page = context.new_page()

    def route(r) -> None:
        if r.request.url == url:
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.on("request", lambda req: problems["requests"].append(req.url))
    page.on("requestfailed", lambda req: problems["failed"].append(req.url))
    page.on("pageerror", lambda exc: problems["errors"].append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and problems["console"].append(msg.text))
    page.goto(url)
    page.wait_for_function("window.kgReady === true", timeout=20_000)
    return page, problems


@pytest.mark.browser
def test_page_draws_offline_and_safely(browser, tmp_path: Path) -> None:
    path = tmp_path / "graph.html"
    path.write_text(render_html(_graph(), title="kg <test>"), encoding="utf-8")
    page, problems = _open(browser, path)
    try:
        assert problems["requests"] == [path.as_uri()]
        assert problems["failed"] == [] and problems["errors"] == [] and problems["console"] == []
        assert page.evaluate("window.kgStats") == {"nodes": N_DRAWN_NODES, "edges": N_DRAWN_EDGES}
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.title() == "kg <test>"
        # The canvas exists and something is painted on it.
        painted = page.evaluate("""() => {
            const c = document.querySelector('#kg-graph canvas');
            if (!c || !c.width || !c.height) return -1;
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) n++;
            return n;
        }""")
        assert painted > 1000
        legend = page.locator("#kg-legend")
        assert legend.is_visible()
        text = legend.inner_text()
        for words in ("papers (3)", "concepts (4)", "venues (1)", "paper \u2013 concept"):
            assert words in text
        # Hover the hostile paper: its tooltip shows the markup as text and runs nothing.
        x, y = page.evaluate("""() => {
            const id = 'paper:p000000000000002';
            const p = window.kgNetwork.canvasToDOM(window.kgNetwork.getPositions([id])[id]);
            const r = document.querySelector('#kg-graph canvas').getBoundingClientRect();
            return [r.left + p.x, r.top + p.y];
        }""")
        page.mouse.move(x + 1, y + 1)
        page.mouse.move(x, y)
        tooltip = page.locator("div.vis-tooltip")
        tooltip.wait_for(state="visible", timeout=5_000)
        tip = tooltip.inner_text()
        assert "<script>window.__pwned = 1</script>" in tip
        assert '<img src=x onerror="window.__pwned=2">' in tip
        assert "中文 العربية" in tip
        assert tooltip.locator("img, script").count() == 0
        page.screenshot(path=str(tmp_path / "graph.png"))
        assert (tmp_path / "graph.png").stat().st_size > 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert problems["requests"] == [path.as_uri()] and problems["errors"] == []
    finally:
        page.context.close()


def _big_graph(n_papers: int = 400, n_concepts: int = 250) -> nx.Graph:
    G = nx.Graph()
    for c in range(n_concepts):
        G.add_node(f"concept:c{c}", kind="concept", label=f"concept {c}", alt_labels=[], papers=0, broader=[])
    for p in range(n_papers):
        pid = f"paper:p{p:015x}"
        G.add_node(pid, kind="paper", label=f"paper {p}", title=None, abstract="words " * 80, text="",
                   venue=None, year=None, urls=[], sources=[], source_id=None)
        for k in range(5):
            c = (p * 7 + k * k * 13) % n_concepts
            G.add_edge(pid, f"concept:c{c}", kind="subject", score=0.5, rank=k + 1, phrase="x")
    return G


@pytest.mark.browser
def test_large_graph_settles_quickly(browser, tmp_path: Path) -> None:
    G = _big_graph()
    started = time.perf_counter()
    page_text = render_html(G)
    render_s = time.perf_counter() - started
    path = tmp_path / "big.html"
    path.write_text(page_text, encoding="utf-8")
    started = time.perf_counter()
    page, problems = _open(browser, path)
    try:
        settle_s = time.perf_counter() - started
        assert problems["errors"] == [] and problems["requests"] == [path.as_uri()]
        stats = page.evaluate("window.kgStats")
        assert stats["nodes"] == G.number_of_nodes()
        assert stats["edges"] == G.number_of_edges()
        assert render_s < 5, f"render_html took {render_s:.1f}s"
        assert settle_s < 20, f"the page took {settle_s:.1f}s to settle"
        # Physics is off once settled: positions no longer move.
        before = page.evaluate("JSON.stringify(window.kgNetwork.getPositions())")
        page.wait_for_timeout(300)
        assert page.evaluate("JSON.stringify(window.kgNetwork.getPositions())") == before
        page.screenshot(path=str(tmp_path / "big.png"))
    finally:
        page.context.close()
