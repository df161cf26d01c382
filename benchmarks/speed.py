"""Speed and memory of kg, measured against baselines in the same run.

Prints a table: what was measured, the corpus size, the median of --runs runs, the ratio to
the baseline measured alongside and, for each row the performance issue sets a target for,
"met" or "MISSED"; then how many targets were met and which were missed. The builds run with
``--executor dask-local:2`` (the README's setting for a large corpus on one machine), or with
kg build's defaults (the local executor) under ``--kg-defaults``. Sections (each can be skipped):

* extraction: plain KeyBERT (default n-gram candidates, MMR), the bound of embedding each
  abstract once with the same model, and kg's extractor, on the seeds and a sample of the
  ML abstracts;
* build: ``kg build`` end to end (read, extract, merge, graph, RDF x3, HTML, stats, store) on
  1,000 / 5,000 / 10,000 real ML abstracts, wall time and peak memory (``/usr/bin/time -v``),
  and the growth exponent from the smallest to the largest size;
* incremental: on the largest build, a rebuild after adding a file of 40 new abstracts, and a
  rebuild with nothing changed (the content cache);

The targets are those of the speed issue (51): extraction at least 10 times plain KeyBERT's
abstracts/s at kg build's precision, a clean 10,000-abstract build within 7 minutes and 3 GiB,
the +40 rebuild within 30 s, the unchanged one within 3 s, each canned query within 100 ms of
engine time, ``kg query top-concepts`` within 2 s as a whole command.
* sparql: every query in ``queries/`` on the largest graph, median engine time on the on-disk
  Oxigraph store ``kg build`` wrote, beside rdflib's in-memory engine; and ``kg query
  top-concepts`` as a whole command;
* html: ``graph.html`` of the largest build opened in headless Chromium, time until it is
  drawn, and the file size (``benchmarks/page.py`` measures the map page in detail);
* validate: ``kg validate`` of a build of the seeds (built into WORK/out-seeds) as a whole
  command, and its check alone (reading graph.ttl, rudof and Oxigraph) beside pySHACL, the
  reference engine, on the same graph and shapes in the same run (stopped after
  --pyshacl-timeout); each --validate-graph DIR (a 10,000-abstract build, say) is checked the same way.

Run: ``.venv/bin/python -m benchmarks.speed`` (``--help`` for options); the data comes from
``../shared/bench-data`` (or ``$KG_BENCH_DATA``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.quality import data_dir, machine

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]
FAST = ["--executor", "dask-local:2"]  # the README's setting for a large corpus on one machine (int8: kg's default)
rows: list[tuple[str, str, str, str, str, str]] = []


def report(what: str, size: object, value: str, baseline: str = "", ratio: str = "", *, met: bool | None = None) -> None:
    """One row of the table; *met* (when the row has a target) adds the verdict: met or MISSED."""
    verdict = "" if met is None else ("met" if met else "MISSED")
    rows.append((what, str(size), value, baseline, ratio, verdict))
    print(f"  {what:<62} {str(size):>7}  {value:>18}  {baseline:>18}  {ratio:>8}  {verdict}", flush=True)


def summary() -> list[str]:
    """The rows that have a target, as lines: how many met, then each one missed."""
    judged = [r for r in rows if r[5]]
    missed = [r for r in judged if r[5] == "MISSED"]
    lines = [f"targets: {len(judged) - len(missed)} of {len(judged)} met"]
    lines += [f"  MISSED: {what} ({size}): {value}, {baseline}".replace(" (): ", ": ") for what, size, value, baseline, *_ in missed]
    return lines


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ml_abstracts(n: int, skip: int = 0) -> list[dict]:
    """The first *n* distinct abstracts (after *skip*) of the ML corpus, files in name order."""
    out, seen = [], set()
    for path in sorted((data_dir() / "ml-abstracts").glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            text = (row.get("abstract") or "").strip()
            if len(text.split()) < 20 or text in seen:
                continue
            seen.add(text)
            if len(seen) <= skip:
                continue
            out.append({k: row.get(k) for k in ("id", "title", "abstract", "venue", "year")})
            if len(out) == n:
                return out
    return out


def write_jsonl(rows_: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows_), encoding="utf-8")
    return path


def bench_extraction(runs: int, sample: int) -> None:
    from keybert import KeyBERT

    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import PRECISIONS, Settings, extract_keyphrases, load_nlp
    from kg.text.sources import read_papers

    default = Settings().precision  # kg build's
    embedder, nlp = load_embedder(), load_nlp()  # the model as published: plain KeyBERT's and the bound's
    mine = {p: load_embedder(p) for p in PRECISIONS}
    plain = KeyBERT(model=embedder.model)
    seeds = [p.document for p in read_papers([ROOT / "seeds"]).papers]
    ml = [((r.get("title") or "") + ". " + r["abstract"]) for r in ml_abstracts(sample, skip=20_000)]
    extract_keyphrases([(str(i), t) for i, t in enumerate(seeds[:8])], embedder, nlp=nlp)  # warm up
    for name, docs in (("seeds", seeds), (f"ML sample", ml)):
        n = len(docs)
        t_plain = median_time(lambda: plain.extract_keywords(docs, keyphrase_ngram_range=(1, 3), stop_words="english",
                                                             use_mmr=True, diversity=0.5, top_n=10), runs)
        t_once = median_time(lambda: embedder.embed(docs), runs)
        items = [(str(i), t) for i, t in enumerate(docs)]
        report(f"extraction, {name}: plain KeyBERT", n, f"{n / t_plain:.1f} abstracts/s")
        report(f"extraction, {name}: embed each abstract once", n, f"{n / t_once:.1f} abstracts/s")
        kinds = []
        for precision in sorted(PRECISIONS, key=lambda p: p != default):  # the default first
            settings = Settings(precision=precision)
            t_kg = median_time(lambda: extract_keyphrases(items, mine[precision], nlp=nlp, settings=settings), runs)
            kinds.append((f"kg, in one process ({precision})", precision, t_kg))
            t_build = model_process_time(items, precision, nlp, runs)  # spaCy here, the model in its own process
            if t_build is not None:
                kinds.append((f"kg build's path, model process ({precision})", precision, t_build))
        for kind, precision, t in kinds:
            # The targets are kg's, at kg build's default precision; the other is printed beside it.
            judged = precision == default
            report(f"extraction, {name}: {kind}" + ("" if judged else ", not the default"), n, f"{n / t:.1f} abstracts/s",
                   "target x10 KeyBERT" if judged else "", f"x{t_plain / t:.1f}", met=t_plain / t >= 10 if judged else None)
            report(f"  its time / embed-once time", n, f"{t / t_once:.2f}", "target 2.00" if judged else "",
                   met=t / t_once <= 2 if judged else None)


def model_process_time(items: list[tuple[str, str]], precision: str, nlp, runs: int) -> float | None:
    """Median seconds for `kg.scale.executor.ModelProcess` to extract *items* (spaCy tags each partition
    here while the model ranks the previous one there), once the process has loaded its model;
    None where no process can be started."""
    from kg.scale.executor import DEFAULT_PARTITION_SIZE, ModelProcess, partitions
    from kg.extract.keyphrases import Settings

    settings = Settings(precision=precision)
    there = ModelProcess.start(precision)
    if there is None:
        return None
    with there:
        list(there.extract([items[:8]], settings=settings, nlp=nlp))  # waits for the model, warms it
        parts = partitions(items, DEFAULT_PARTITION_SIZE)
        return median_time(lambda: [r for part in there.extract(parts, settings=settings, nlp=nlp) for r in part], runs)


def timed_build(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (GiB) of one `kg build` run."""
    cmd = ["/usr/bin/time", "-v", *KG, "build", *args, "-q"]
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"kg build failed:\n{run.stderr[-3000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    return wall, (int(rss.group(1)) / 1024 / 1024 if rss else float("nan"))


def bench_build(sizes: list[int], work: Path, build_args: list[str]) -> Path:
    times = {}
    largest = None
    for n in sizes:
        corpus = write_jsonl(ml_abstracts(n), work / f"corpus-{n}" / "abstracts.jsonl").parent
        out = work / f"out-{n}"
        shutil.rmtree(out, ignore_errors=True)
        wall, rss = timed_build([str(corpus), "--out", str(out), *build_args], ROOT)
        times[n] = wall
        stats = json.loads((out / "stats.json").read_text())
        target = n >= 10_000
        report("kg build end to end (clean)", n, f"{wall:.0f} s, {rss:.2f} GiB", "target 420 s, 3 GiB" if target else "",
               f"{n / wall:.1f}/s", met=(wall <= 420 and rss <= 3) if target else None)
        report("  graph: concepts / triples of graph.nt", n,
               f"{stats['concepts']} / {sum(1 for _ in (out / 'graph.nt').open())}")
        largest = (n, corpus, out)
    if len(times) >= 2:
        a, b = min(times), max(times)
        report("growth exponent of build time", f"{a}-{b}", f"{math.log(times[b] / times[a]) / math.log(b / a):.2f}", "linear 1.00")
    return largest


def bench_incremental(largest, build_args: list[str]) -> None:
    n, corpus, out = largest
    extra = write_jsonl(ml_abstracts(40, skip=n), corpus / "added.jsonl")
    try:
        wall, rss = timed_build([str(corpus), "--out", str(out), *build_args], ROOT)
        report("rebuild after adding 40 abstracts", n + 40, f"{wall:.1f} s, {rss:.2f} GiB", "target 30 s", met=wall <= 30)
        wall, rss = timed_build([str(corpus), "--out", str(out), *build_args], ROOT)
        report("rebuild with nothing changed", n + 40, f"{wall:.1f} s, {rss:.2f} GiB", "target 3 s", met=wall <= 3)
    finally:
        extra.unlink()


def bench_sparql(out: Path, runs: int) -> None:
    import pyoxigraph as ox
    from rdflib import Graph

    from kg.sparql.catalogue import canned_queries
    from kg.sparql.engine import load_store, run_query
    from kg.sparql.bindings import parse_binding

    from kg.sparql.catalogue import named_query, paged_text, split_page

    def as_run(name: str, binds: list[str]) -> tuple[str, list[str]]:
        """The text kg query runs for *name* with *binds* (a paged query's page written in) and the other bindings."""
        canned = named_query(name)
        page, rest = split_page(canned, binds)
        return paged_text(canned, page), rest

    def engine(name: str, binds: list[str]) -> bytes:
        """Oxigraph evaluating the query and writing its SPARQL JSON results, as a SPARQL server
        answers: the engine time (run_query also reads those results into Python objects)."""
        text, rest = as_run(name, binds)
        subs = {ox.Variable(k): v for k, v in map(parse_binding, rest)}
        return store.query(text, substitutions=subs or None).serialize(format=ox.QueryResultsFormat.JSON)

    store = load_store(out / "graph.ttl")
    first_paper = next(iter(store.query("SELECT ?p WHERE { ?p a <https://schema.org/ScholarlyArticle> } LIMIT 1")))["p"]
    g = None
    for query in canned_queries():  # each with the variables its header lists under "Bindings"
        name, text = query["name"], query["text"]
        binds = []
        takes = {v["name"] for v in query["variables"]}
        if "label" in takes:
            binds = ["label=neural networks"]  # a broad concept: 505 narrower ones, 1,630 papers under it at 10,040
        elif "paper" in takes:
            binds = [f"paper=<{first_paper.value}>"]
        elif "text" in takes:
            binds = ["text=graph"]  # a broad text: 2,872 labels contain it at 10,040
        cases = [binds]
        if name == "cooccurring-concepts":
            cases.append([*binds, "top=0"])  # the first 100 rows by default; top=0 gives them all
        elif name == "papers-of-concept":
            cases.append(["label=large language model"])  # a specific concept beside the broad one
        elif name == "search":
            cases.append(["text=zeroth-order optimization"])  # a specific text beside the broad one
        for binding in cases:
            # A paged query: its default page (the target) and, beside it, its whole answer
            # (limit=0), each page checked to be the whole answer's first rows.
            for page in ([binding, [*binding, "limit=0"]] if query["paged"] else [binding]):
                t_ox = median_time(lambda: engine(name, page), runs)
                t_api = median_time(lambda: run_query(store, *as_run(name, page)), runs)
                rows_ = run_query(store, *as_run(name, page)).rows
                if page is not binding:
                    assert run_query(store, *as_run(name, binding)).rows == rows_[:100], f"{name}: a page is not the first rows"
                shown = " ".join(b for b in page if not b.startswith("paper="))
                what = f"sparql {name}{' ' + shown if shown else ''} (Oxigraph store)"
                if page is binding:
                    report(what, "", f"{t_ox * 1000:.0f} ms, {len(rows_)} rows", "target 100 ms",
                           f"{t_api * 1000:.0f} ms in run_query", met=t_ox <= 0.1)
                else:  # the whole answer: reported, not judged
                    report(what, "", f"{t_ox * 1000:.0f} ms, {len(rows_)} rows", "", f"{t_api * 1000:.0f} ms in run_query")
        if name in ("top-concepts", "concepts-of-paper", "papers-with-code"):
            if g is None:
                start = time.perf_counter()
                g = Graph().parse(out / "graph.nt", format="nt")
                report("rdflib: parse graph.nt into memory", len(g), f"{time.perf_counter() - start:.1f} s")
            from rdflib import Literal, URIRef

            init = {}
            for b in binds:
                var, _, value = b.partition("=")
                init[var] = URIRef(value[1:-1]) if value.startswith("<") else Literal(value)
            start = time.perf_counter()
            list(g.query(as_run(name, binds)[0], initBindings=init))
            t_rdflib = time.perf_counter() - start
            report(f"sparql {name} (rdflib in memory)", "", f"{t_rdflib * 1000:.0f} ms", f"Oxigraph {t_ox * 1000:.0f} ms",
                   f"x{t_rdflib / max(t_ox, 1e-6):.0f}")
    start = time.perf_counter()
    subprocess.run([*KG, "query", "top-concepts", "--graph", str(out / "graph.ttl")], cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - start
    report("kg query top-concepts, whole command", "", f"{wall:.2f} s", "target 2 s", met=wall <= 2)


def bench_html(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    page_file = out / "graph.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--headless", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        page.goto(page_file.as_uri())
        page.wait_for_function("window.kgReady === true", timeout=120_000)
        settled = time.perf_counter() - start
        drawn = page.evaluate("window.kgStats")
        browser.close()
    report("graph.html opens and is drawn in Chromium", "", f"{settled:.1f} s", "target 5 s", met=settled <= 5)
    report("  concepts / links / papers drawn at first", "", f"{drawn['concepts']} / {drawn['links']} / {drawn['papers']}")
    size = page_file.stat().st_size / 1e6
    report("graph.html size", "", f"{size:.1f} MB", "target 20 MB", met=size <= 20)


PYSHACL_TIMEOUT = 900  # seconds pySHACL may take on one graph before its row says "over"


def validate_time(graph: Path) -> float:
    """Wall seconds of kg.rdf.validate.validate_graph (reading the graph, rudof, Oxigraph) in a fresh process."""
    code = ("import sys, time; from kg.rdf.validate import validate_graph; t = time.perf_counter(); "
            "v = validate_graph(sys.argv[1]); print(time.perf_counter() - t, v.conforms, v.violations)")
    run = subprocess.run([sys.executable, "-c", code, str(graph)], cwd=ROOT, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise SystemExit(f"validate_graph failed:\n{run.stderr[-3000:]}")
    seconds, conforms, violations = run.stdout.split()
    if conforms != "True":
        print(f"  ({graph}: {violations} violations)")
    return float(seconds)


def pyshacl_time(graph: Path, timeout: float) -> float | None:
    """Wall seconds of pySHACL (the reference engine, without inference or advanced mode) reading graph.ttl
    into rdflib and checking it against the same shapes, in a fresh process; None past *timeout*."""
    code = ("import sys, time; from rdflib import Graph; from pyshacl import validate; from kg.resources import shapes_file; "
            "t = time.perf_counter(); g = Graph().parse(sys.argv[1] + '/graph.ttl', format='turtle'); "
            "validate(g, shacl_graph=Graph().parse(shapes_file(), format='turtle'), inference='none', advanced=False); "
            "print(time.perf_counter() - t)")
    try:
        run = subprocess.run([sys.executable, "-c", code, str(graph)], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return float(run.stdout.split()[-1])


def bench_validate(work: Path, runs: int, graphs: list[Path], timeout: float) -> None:
    seeds = work / "out-seeds"
    work.mkdir(parents=True, exist_ok=True)
    if not (seeds / "graph.ttl").is_file():
        subprocess.run([*KG, "build", "seeds", "--out", str(seeds), "-q"], cwd=ROOT, check=True,
                       env=os.environ | {"HF_HUB_OFFLINE": "1"})
    cmd = [*KG, "validate", "--graph", str(seeds)]
    whole = median_time(lambda: subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True), runs)
    report("kg validate, whole command", "seeds", f"{whole:.1f} s", "target 10 s", met=whole <= 10)
    for i, graph in enumerate([seeds, *graphs]):
        size = "seeds" if i == 0 else graph.name
        now = statistics.median(validate_time(graph) for _ in range(runs))
        before = pyshacl_time(graph, timeout)  # once: the baseline is slow
        report("  read + check: kg (rudof + Oxigraph) / pySHACL", size, f"{now:.1f} s",
               f"{before:.1f} s" if before is not None else f"over {timeout:.0f} s",
               f"x{before / now:.1f}" if before is not None else f">x{timeout / now:.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--runs", type=int, default=3, help="runs per timing (median); builds run once each")
    parser.add_argument("--sample", type=int, default=200, help="ML abstracts for the extraction comparison")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench"))
    parser.add_argument("--skip", nargs="*", default=[], choices=["extraction", "build", "incremental", "sparql", "html", "validate"])
    parser.add_argument("--pyshacl-timeout", type=float, default=PYSHACL_TIMEOUT, metavar="SECONDS",
                        help="how long the pySHACL baseline may take on one graph")
    parser.add_argument("--validate-graph", type=Path, nargs="*", default=[], metavar="DIR",
                        help="more builds to time kg validate's check on (WORK/out-10000, say)")
    parser.add_argument("--kg-defaults", action="store_true",
                        help=f"build with kg build's defaults (the local executor) instead of {' '.join(FAST)}")
    args = parser.parse_args(argv)
    build_args = [] if args.kg_defaults else FAST
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"machine: {machine()}")
    print(f"builds: kg build CORPUS --out DIR {' '.join(build_args)}".rstrip())
    print(f"  {'what':<62} {'size':>7}  {'median':>18}  {'baseline/target':>18}  {'ratio':>8}")
    if "extraction" not in args.skip:
        bench_extraction(args.runs, args.sample)
    largest = None
    if "build" not in args.skip:
        largest = bench_build(sorted(args.sizes), args.work, build_args)
    else:
        n = max(args.sizes)
        largest = (n, args.work / f"corpus-{n}", args.work / f"out-{n}")
    if "incremental" not in args.skip:
        bench_incremental(largest, build_args)
    if "sparql" not in args.skip:
        bench_sparql(largest[2], args.runs)
    if "html" not in args.skip:
        bench_html(largest[2])
    if "validate" not in args.skip:
        bench_validate(args.work, args.runs, args.validate_graph, args.pyshacl_timeout)
    for line in summary():
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
