"""``python -m benchmarks`` (``make bench``): every benchmark in turn, each printing its table.

1. speed: extraction vs plain KeyBERT and the embed-once bound; builds of 1k/5k/10k ML
   abstracts; incremental rebuilds; SPARQL; the HTML view  (``benchmarks/speed.py``)
2. load: 8 clients, 2,000 canned queries against ``kg serve`` of the largest build (``benchmarks/load.py``)
3. quality: ``kg eval`` on Inspec, SemEval-2010 and NUS with the baselines, and author-keyword
   recovery on the ML abstracts (``benchmarks/quality.py``)
4. layout: the map's clusters and layout on the 1k and 10k builds of step 1, against the
   alternatives (``benchmarks/layout.py``)

Each can also be run alone: ``python -m benchmarks.speed``, ``python benchmarks/load.py``,
``python -m benchmarks.quality``, ``python -m benchmarks.layout``; and, not run by this one,
``python -m benchmarks.levers`` (ranking settings on five gold sets from recorded model answers).
"""

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description="Every benchmark in turn: speed, load, quality, layout.")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench"), help="where the corpora and builds go")
    parser.add_argument("--kg-defaults", action="store_true", help="speed: build with kg build's defaults (see its --help)")
    args = parser.parse_args(argv)
    work = args.work
    steps = [
        [sys.executable, "-m", "benchmarks.speed", "--work", str(work), *(["--kg-defaults"] if args.kg_defaults else [])],
        [sys.executable, str(ROOT / "benchmarks" / "load.py"), "--graph", str(work / "out-10000")],
        [sys.executable, "-m", "benchmarks.quality"],
        [sys.executable, "-m", "benchmarks.layout", "--graphs", str(work / "out-1000"), str(work / "out-10000")],
    ]
    failed = 0
    for cmd in steps:
        print("$", " ".join(cmd[1:]), flush=True)
        failed |= subprocess.run(cmd, cwd=ROOT).returncode != 0
    return int(failed)


if __name__ == "__main__":
    raise SystemExit(main())
