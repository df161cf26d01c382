"""Each canned query on a build's Oxigraph store, as `kg query` runs it: engine time and rows.

The store is opened read-only (a build of any size: nothing is loaded into memory); each query in
queries/ runs with its default page and one binding chosen by what it takes (``label=neural
networks``, ``paper=`` the store's first paper, ``text=graph``, ``venue=ICML``; a query that
needs another binding answers no rows), three times (once when a run takes over 20 s); the
median is printed. For a whole field's build, where `benchmarks.speed` (which loads graph.ttl
into memory) does not fit.

Run: ``.venv/bin/python -m benchmarks.queries DIR`` (a build folder made by ``kg build``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

BINDINGS = (("label", "label=neural networks"), ("text", "text=graph"), ("venue", "venue=ICML"))


def main(argv: list[str] | None = None) -> int:
    import pyoxigraph as ox

    from kg.sparql.bindings import parse_binding
    from kg.sparql.catalogue import canned_queries, named_query, paged_text, split_page

    parser = argparse.ArgumentParser(prog="python -m benchmarks.queries", description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path, help="a build folder (kg build --out DIR)")
    args = parser.parse_args(argv)
    store = ox.Store.read_only(str(args.build / "store" / "data"))
    first = next(iter(store.query("SELECT ?p WHERE { ?p a <https://schema.org/ScholarlyArticle> } LIMIT 1")))["p"]
    print(f"{'query':28} {'binding':24} {'engine':>9} {'rows':>6}")
    for query in canned_queries():
        takes = {v["name"] for v in query["variables"]}
        binds = [b for name, b in BINDINGS if name in takes][:1] or ([f"paper=<{first.value}>"] if "paper" in takes else [])
        canned = named_query(query["name"])
        page, rest = split_page(canned, binds)
        text = paged_text(canned, page)
        subs = {ox.Variable(k): v for k, v in map(parse_binding, rest)} or None
        times, rows = [], 0
        for _ in range(3):
            start = time.perf_counter()
            answer = store.query(text, substitutions=subs).serialize(format=ox.QueryResultsFormat.TSV)
            times.append(time.perf_counter() - start)
            rows = len(answer.splitlines()) - 1
            if times[-1] > 20:
                break
        shown = " ".join(b for b in binds if not b.startswith("paper="))
        print(f"{query['name']:28} {shown:24} {statistics.median(times) * 1000:7.0f} ms {rows:6}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
