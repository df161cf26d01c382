"""Concept types on the map page and in the explorer (issue 45): the payload's type column, the
colouring by type with its legend, the filter by type, and a concept's type, votes and typed
relations in the explorer's details panel; a graph without types shows none of it."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest
from mapgraphs import small_graph
from typedgraph import ABSTRACTS, TYPED, typed_graph

from kg.view.explorer import Explorer
from kg.view.mapdata import map_payload
from kg.view.page import render_html


def _groups(node: dict) -> dict[str, list[str]]:
    return {g["key"]: [r["id"] for r in g["items"]] for g in node["relations"]}


# ---------------------------------------------------------------- pure Python


def test_the_payload_gives_each_concepts_type_as_an_index() -> None:
    G = typed_graph()
    payload = map_payload(G)
    assert payload["types"] == ["Task", "Method", "Dataset", "Metric"]  # those present, in CONCEPT_TYPES order
    got = {c: payload["types"][t] if t >= 0 else None for c, t in zip(payload["concepts"]["id"], payload["concepts"]["type"])}
    assert got == {n: d.get("entity_type") for n, d in G.nodes(data=True) if d["kind"] == "concept"}
    assert got["concept:attention"] is None and got["concept:beam-search"] is None  # a tie; no vote
    untyped = map_payload(typed_graph(types=False))
    assert "types" not in untyped and "type" not in untyped["concepts"]
    del payload["types"], payload["concepts"]["type"]
    assert payload == untyped  # types add those two keys and nothing else
    assert "types" not in map_payload(small_graph())


def test_the_explorer_gives_a_concepts_type_votes_and_relations_both_ways() -> None:
    E = Explorer(typed_graph())
    t = E.node("concept:transformer")
    assert t["entity_type"] == "Method" and list(t["type_votes"].items()) == [("Method", 5), ("Task", 1)]
    assert _groups(t) == {"used_for": ["concept:machine-translation"], "evaluated_on": ["concept:wmt14"],
                          "compared_with": ["concept:recurrent-neural-network"], "parts": ["concept:attention"],
                          "kind_of": ["concept:neural-network"]}
    assert [g["label"] for g in t["relations"]] == ["used for", "evaluated on", "compared with", "parts", "kind of"]
    used = t["relations"][0]["items"][0]
    assert (used["label"], used["entity_type"], used["papers"]) == ("machine translation", "Task", 2)
    # evidence: best score first, each the sentence of its paper's abstract
    assert [e["paper"] for e in used["evidence"]] == ["paper:q100000000000000", "paper:q200000000000000"]
    assert used["evidence"][0]["sentence"] == "The transformer is used for machine translation and beats recurrent neural networks."
    assert used["evidence"][0]["sentence"] in ABSTRACTS["q100000000000000"]
    # the reverse ones, from the other concepts' relations; a symmetric one reads the same both ways
    mt = E.node("concept:machine-translation")
    assert _groups(mt) == {"uses": ["concept:transformer", "concept:recurrent-neural-network"],  # by support
                           "evaluated_on": ["concept:bleu"]}
    assert _groups(E.node("concept:wmt14")) == {"evaluates": ["concept:transformer"]}
    assert _groups(E.node("concept:recurrent-neural-network")) == {
        "used_for": ["concept:machine-translation"], "compared_with": ["concept:transformer"]}
    assert _groups(E.node("concept:neural-network")) == {"kinds": ["concept:transformer"]}
    tie = E.node("concept:attention")
    assert tie["entity_type"] is None and tie["type_votes"] == {"Method": 1, "Task": 1}
    assert "relations" not in E.node("concept:beam-search")  # no vote, no relation: the panel as before
    assert "relations" not in Explorer(typed_graph(types=False)).node("concept:transformer")


def test_evidence_out_of_its_abstract_gives_no_sentence() -> None:
    G = typed_graph()
    G.nodes["concept:wmt14"]["relations"][0]["evidence"][0]["end"] = 10_000
    rows = Explorer(G).node("concept:wmt14")["relations"][0]["items"][0]["evidence"]
    assert [(e["paper"], e["sentence"] is None) for e in rows] == [("paper:q400000000000000", False), ("paper:q100000000000000", True)]


# ---------------------------------------------------------------- in Chromium


@pytest.mark.browser
def test_the_map_colours_and_filters_by_type_with_a_legend(open_page) -> None:
    G = typed_graph()
    o = open_page(render_html(G, title="typed"))
    page = o.page
    assert page.eval_on_selector_all("#kg-color option", "os => os.map(o => o.value)") == ["cluster", "year", "venue", "type"]
    page.select_option("#kg-color", "type")
    legend = page.evaluate("kgMap.legend()")
    assert legend["mode"] == "type"
    items = [(i["label"], i["count"]) for i in legend["items"]]
    assert items == [("Task", 1), ("Method", 3), ("Dataset", 1), ("Metric", 1), ("no type", 2)]
    colour = {i["label"]: i["color"] for i in legend["items"]}
    assert len(set(colour.values())) == 5
    ids = ["concept:transformer", "concept:machine-translation", "concept:wmt14", "concept:bleu", "concept:beam-search"]
    assert page.evaluate(f"kgMap.colorsOf({json.dumps(ids)})") == [
        colour["Method"], colour["Task"], colour["Dataset"], colour["Metric"], colour["no type"]]
    shown = page.eval_on_selector_all("#kg-legend-body li", "ls => ls.map(l => [l.textContent, l.dataset.color])")
    assert [s[0] for s in shown] == ["Task1", "Method3", "Dataset1", "Metric1", "no type2"]
    assert [s[1] for s in shown] == list(colour.values())
    # the filter: only the Methods, and the papers that have one
    page.select_option("#kg-type", str(legend["items"][1]["type"]))
    page.click("#kg-apply")
    concepts, papers = page.evaluate("""(() => { const v = kgApp.view, M = kgApp.M;
        return [v.sel.ranked.map(i => M.C.id[i]), v.papers.map(i => M.P.id[i])]; })()""")
    assert sorted(concepts) == sorted(n for n, d in G.nodes(data=True) if d.get("entity_type") == "Method")
    assert sorted(papers) == sorted(f"paper:{p}" for p in {p for c in ("transformer", "recurrent-neural-network", "neural-network")
                                                              for p in TYPED[c][2]})
    assert page.get_attribute("body", "data-kg-filtered") == "yes"
    page.click("#kg-filter-reset")
    assert o.state()["concepts"] == 8
    assert page.evaluate("kgMap.setFilters({type: 0})")["concepts"] == 1  # Task: machine translation
    # the details of a concept name its type (graph.html has no votes nor relations: the explorer has)
    page.evaluate("kgMap.focus('concept:transformer')")
    assert page.text_content("#kg-typed") == "Method"
    assert o.errors == []


@pytest.mark.browser
def test_a_graph_without_types_shows_no_type_control(open_page) -> None:
    o = open_page(render_html(typed_graph(types=False)))
    page = o.page
    assert page.eval_on_selector_all("#kg-color option", "os => os.map(o => o.value)") == ["cluster", "year", "venue"]
    assert page.query_selector("#kg-type") is None
    page.evaluate("kgMap.focus('concept:transformer')")
    assert page.query_selector("#kg-typed") is None and o.errors == []


@pytest.mark.browser
def test_the_explorers_details_give_type_votes_and_typed_relations(browser) -> None:
    E = Explorer(typed_graph(), title="typed explorer")
    base = "http://127.0.0.1:9/"
    asked: list[str] = []

    def answer(route) -> None:
        url = route.request.url
        if url == base:
            route.fulfill(body=E.page(), content_type="text/html; charset=utf-8")
        elif url == base + "api/map":
            route.fulfill(body=E.map_json(), content_type="application/json")
        elif url.startswith(base + "api/node?"):
            node = parse_qs(urlparse(url).query)["id"][0]
            asked.append(node)
            route.fulfill(body=json.dumps(E.node(node)), content_type="application/json")
        elif url == base + "queries":
            route.fulfill(body=b"[]", content_type="application/json")
        else:
            route.abort()

    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", answer)
        page.goto(base)
        page.wait_for_function("window.kgReady === true", timeout=30_000)
        page.evaluate("kgMap.focus('concept:transformer')")
        page.wait_for_selector("#kg-typed[data-node='concept:transformer']")
        assert page.text_content("#kg-typed .kg-type-line") == "Method \u2014 5 mentions as Method, 1 as Task"
        heads = page.eval_on_selector_all("#kg-typed .kg-rel-head", "hs => hs.map(h => h.textContent)")
        assert heads == ["used for (1)", "evaluated on (1)", "compared with (1)", "parts (1)", "kind of (1)"]
        used = page.locator("#kg-typed ul[data-group='used_for'] > li")
        assert used.locator("button.kg-link").first.text_content() == "machine translation"
        assert "2 papers" in used.text_content()
        sentence = used.locator("blockquote").first
        assert not sentence.is_visible()  # evidence on demand
        used.locator("summary").click()
        assert sentence.text_content() == "The transformer is used for machine translation and beats recurrent neural networks."
        assert used.locator("details p button").first.text_content() == "paper 1"
        # a related concept is a link: its details, with the reverse relations
        used.locator("button.kg-link").first.click()
        page.wait_for_selector("#kg-typed[data-node='concept:machine-translation']")
        uses = page.eval_on_selector_all("#kg-typed ul[data-group='uses'] > li > button", "bs => bs.map(b => b.textContent)")
        assert uses == ["transformer", "recurrent neural network"]
        assert page.text_content("#kg-typed .kg-type-line") == "Task \u2014 4 mentions as Task"
        page.evaluate("kgMap.focus('concept:attention')")
        page.wait_for_selector("#kg-typed[data-node='concept:attention']")
        assert page.text_content("#kg-typed .kg-type-line") == (
            "no type \u2014 1 mention as Method, 1 as Task (the votes elect none)")
        # an evidence's paper is a link too
        page.click("#kg-typed ul[data-group='part_of'] summary")
        page.click("#kg-typed ul[data-group='part_of'] details p button")
        assert page.get_attribute("#kg-details", "data-node") == "paper:q200000000000000"
        assert errors == [] and "concept:transformer" in asked
    finally:
        context.close()
