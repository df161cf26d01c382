"""The figures behind docs/scaling.md: what one worker costs per 1,000 abstracts, and how the
single-process stages after extraction grow with the corpus.

Two parts, each printing a table and (with ``--json``) writing its figures:

* **extraction per worker**: the real packaged model and spaCy pipeline on *N* real ML
  abstracts in one process with one torch thread (what one Dask worker of
  ``--executor dask-local`` runs), as CPU seconds and wall seconds per 1,000 abstracts, the
  texts embedded, and the process' peak memory;
* **stages after extraction**: ``kg build`` of 1,000 / 5,000 / 10,000 ML abstracts with the
  extraction taken from the cache (a first build fills it, with the tests' hashing embedder so
  that no model time is spent), so the time measured is reading, merging, the graph, RDF in
  three formats, HTML, stats and the Oxigraph store: the part that runs in one process whatever
  the executor. Each in its own process under ``/usr/bin/time -v`` for peak memory, plus the
  triples, the size of every output and of the store.

Run: ``.venv/bin/python -m benchmarks.scaling [--sizes 1000 5000 10000] [--sample 500] [--json FILE]``.

With ``--synthetic``, a third part alone (issue 24): **peak memory per process** of builds of
10,000 / 20,000 / 40,000 abstracts (``--sizes``; corpora of any size, `synthetic_rows`: a
sample of the ML abstracts, and beyond their 43,596 new ones recombined from their
sentences), each built by ``kg.build(..., embedder=HashEmbedder(), executor=..., store=True)``
in a subprocess as a user's build runs (the real spaCy candidates, ranking, merge, graph, RDF,
views and store; fake vectors), once cold and once warm (the extraction from the cache, every
stage after it again). While it runs, every process under it is sampled every 0.2 s and given
a role (`process_role`): the client, the Dask workers, the forked writers of the views, the
store loader, the model process. Per size: wall time, the time after extraction, each role's
peak, triples and concepts; then the client's peak against N (least squares, bytes per
abstract) and its ratio to the smallest size's.

Run: ``.venv/bin/python -m benchmarks.scaling --synthetic [--sizes 10000 20000 40000]
[--executor dask-local:2] [--cold-only] [--entities] [--work DIR] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.quality import machine
from benchmarks.speed import ml_abstracts, write_jsonl

ROOT = Path(__file__).resolve().parent.parent

_BUILD = """
import sys, time, json
sys.path[:0] = [{root!r}, {tests!r}]
from conftest import HashEmbedder
import kg
t = time.perf_counter()
r = kg.build([{corpus!r}], {out!r}, embedder=HashEmbedder(), store=True)
print(json.dumps({{"seconds": time.perf_counter() - t, "extraction": r.extraction if hasattr(r, "extraction") else None,
                  "papers": r.stats["papers"], "concepts": r.stats["concepts"]}}))
"""


def extraction_per_worker(sample: int, precision: str = "fp32") -> dict:
    """The real extractor in this process, one torch thread: cost per 1,000 abstracts."""
    import torch

    torch.set_num_threads(1)
    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings, extract_keyphrases, load_nlp

    embedder, nlp = load_embedder(precision), load_nlp()
    settings = Settings(precision=precision)
    rows = ml_abstracts(sample, skip=30_000)
    items = [(str(i), (r.get("title") or "") + ". " + r["abstract"]) for i, r in enumerate(rows)]
    extract_keyphrases(items[:16], embedder, nlp=nlp, settings=settings)  # warm up
    wall, cpu = time.perf_counter(), time.process_time()
    extract_keyphrases(items, embedder, nlp=nlp, settings=settings)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    return {"precision": precision, "abstracts": len(items), "cpu_s_per_1000": cpu / len(items) * 1000, "wall_s_per_1000": wall / len(items) * 1000,
            "peak_mib": peak, "load_average": os.getloadavg()[0]}


def _timed(code: str) -> tuple[dict, float]:
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1]), int(peak.group(1)) / 1024 if peak else float("nan")


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def stages_after_extraction(sizes: list[int], work: Path) -> list[dict]:
    rows = []
    for n in sizes:
        corpus = write_jsonl(ml_abstracts(n), work / f"corpus-{n}" / "abstracts.jsonl").parent
        out = work / f"out-{n}"
        code = _BUILD.format(root=str(ROOT), tests=str(ROOT / "tests"), corpus=str(corpus), out=str(out))
        if not (out / ".cache").exists():
            _timed(code)  # fills the extraction cache
        for name in ("graph.nt", "stats.json"):  # force the full rebuild (not the unchanged shortcut)
            (out / name).unlink(missing_ok=True)
        result, peak = _timed(code)
        nt = out / "graph.nt"
        with nt.open("rb") as f:
            triples = sum(1 for _ in f)
        row = {"abstracts": n, "seconds": result["seconds"], "peak_mib": peak, "concepts": result["concepts"], "triples": triples,
               "store_mib": _du(out / "store") / 2**20, "load_average": os.getloadavg()[0]}
        row |= {f"{name}_mib": (out / name).stat().st_size / 2**20 for name in ("graph.nt", "graph.ttl", "graph.jsonld", "graph.html", "graph.json")}
        rows.append(row)
        print(f"  {n:>6} abstracts: {row['seconds']:7.1f} s, peak {peak:7.0f} MiB, {triples:>9,} triples, "
              f"{row['concepts']:>7,} concepts, store {row['store_mib']:6.0f} MiB, graph.nt {row['graph.nt_mib']:6.0f} MiB "
              f"(load {row['load_average']:.1f})", flush=True)
    return rows



# --- synthetic corpora of any size, with per-process peak memory (issue 24) -----------------

SEED = 20261202
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

_SYNTH_BUILD = """
import sys, time, json, os, resource
sys.path[:0] = [{root!r}, {tests!r}]
from support import HashEmbedder
import kg
marks, done = {{}}, [0]
t0 = time.perf_counter()
def on_start(report):
    marks["read"] = time.perf_counter() - t0
    marks["papers"] = len(report.papers)
def progress(n):
    done[0] += n
    if "extracted" not in marks and done[0] >= marks.get("papers", float("inf")):
        marks["extracted"] = time.perf_counter() - t0
r = kg.build([{corpus!r}], {out!r}, embedder=HashEmbedder(), executor={executor!r}, store=True,
             on_start=on_start, progress=progress, entities={entities!r})
seconds = time.perf_counter() - t0
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
cpu = os.times()
print(json.dumps({{"seconds": seconds, "read_s": marks.get("read"), "extracted_s": marks.get("extracted"),
                  "extraction": r.extraction, "papers": r.stats["papers"], "concepts": r.stats["concepts"],
                  "duplicates_merged": r.stats.get("input", {{}}).get("duplicates_merged"),
                  "vmhwm_kib": int(status["VmHWM"].split()[0]), "cpu_s": cpu.user + cpu.system,
                  "children_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "stages": [[n, s, p] for (n, s), (_, p) in zip(r.timings, r.peaks)]}}))
"""


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(" ".join(text.split())) if s]


def _recombined(pool: list[dict], count: int, rng, taken: set[str]) -> list[dict]:
    """*count* new abstracts, each the opening sentences of one real abstract and the closing
    ones of another (a third's middle sentence between them when both are short), with a
    title of its own; none equal to one in *taken* (kg's reader merges equal abstracts)."""
    split = [(r, _sentences(r["abstract"])) for r in pool]
    split = [(r, s) for r, s in split if len(s) >= 2]
    out: list[dict] = []
    while len(out) < count:
        (a, sa), (b, sb), (_, sc) = rng.sample(split, 3)
        head = sa[: max(1, len(sa) // 2)]
        tail = sb[len(sb) // 2 :]
        middle = [rng.choice(sc)] if len(head) + len(tail) < 5 else []
        text = " ".join(head + middle + tail)
        key = " ".join(text.lower().split())
        if key in taken or len(text.split()) < 20:
            continue
        taken.add(key)
        i = len(out)
        out.append({"id": f"synthetic-{i:06d}", "title": f"{a.get('title') or 'Untitled'}, revisited ({i})",
                    "abstract": text, "venue": b.get("venue"), "year": a.get("year")})
    return out


def synthetic_rows(n: int, pool: list[dict] | None = None, seed: int = SEED) -> list[dict]:
    """A deterministic corpus of *n* abstracts from *pool* (default: every distinct ML abstract,
    `ml_abstracts`): a random sample of the real rows when there are enough, else all of them
    (shuffled) and new abstracts recombined from their sentences (`_recombined`) for the rest."""
    import random

    pool = ml_abstracts(10**9) if pool is None else pool
    rng = random.Random(seed)
    if n <= len(pool):
        return rng.sample(pool, n)
    rows = rng.sample(pool, len(pool))
    taken = {" ".join(r["abstract"].lower().split()) for r in rows}
    return rows + _recombined(pool, n - len(pool), rng, taken)


def _status(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of *pid* in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None


def process_role(cmdline: list[str], client_cmdline: list[str]) -> str:
    """What a process of the build (not the client) is, from its command line and the client's."""
    text = " ".join(cmdline)
    if "_store_main" in text:
        return "store loader"
    if "_model_process_main" in text:
        return "model process"
    if "resource_tracker" in text:
        return "multiprocessing resource tracker"
    if "spawn_main" in text or "--multiprocessing-fork" in text:
        return "dask worker"
    if "distributed.cli" in text or "dask-scheduler" in text or "dask scheduler" in text:
        return "dask scheduler"
    if cmdline == client_cmdline:  # forked by the client, or by its views writer (the map files' writer)
        return "views writer (fork)"
    name = Path(cmdline[0]).name if cmdline else "?"
    return f"other ({name})"


def watch(proc: subprocess.Popen, interval: float = 0.2) -> dict:
    """Peak memory of *proc* (the client) and of every process under it, sampled every
    *interval* seconds until it ends, by role (`process_role`): for each role the largest
    process's sampled RSS and its kernel high-water mark (VmHWM, read at the same time; a
    process that execs starts a new one), how many processes had it, and the peak of all
    processes' RSS summed (pages a fork shares with its parent count in both)."""
    import psutil

    client = psutil.Process(proc.pid)
    client_cmd = client.cmdline()
    seen: dict[tuple[int, float], dict] = {}
    total_peak = samples = 0
    while proc.poll() is None:
        try:
            procs = [client, *client.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        total = 0
        for p in procs:
            try:
                cmd, key = p.cmdline(), (p.pid, p.create_time())
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            mem = _status(p.pid)
            if mem is None:
                continue
            role = "client" if p.pid == client.pid else process_role(cmd, client_cmd)
            rec = seen.get(key)
            if rec is None or rec["role"] != role:  # new, or it has exec'd: a new high-water mark
                rec = seen[key] = {"pid": p.pid, "role": role, "cmd": " ".join(cmd)[:200], "rss": 0, "hwm": 0,
                                   "first": time.perf_counter()}
            rec["rss"], rec["hwm"] = max(rec["rss"], mem[0]), max(rec["hwm"], mem[1])
            rec["last"] = time.perf_counter()
            total += mem[0]
        total_peak, samples = max(total_peak, total), samples + 1
        time.sleep(interval)
    roles: dict[str, dict] = {}
    for rec in seen.values():
        r = roles.setdefault(rec["role"], {"processes": 0, "rss_peak": 0, "hwm_peak": 0, "seconds": 0.0})
        r["processes"] += 1
        r["rss_peak"], r["hwm_peak"] = max(r["rss_peak"], rec["rss"]), max(r["hwm_peak"], rec["hwm"])
        r["seconds"] = max(r["seconds"], rec["last"] - rec["first"])
    return {"roles": roles, "all_processes_rss_peak": total_peak, "samples": samples}


def _synthetic_build(corpus: Path, out: Path, executor: str, entities: bool = False) -> dict:
    code = _SYNTH_BUILD.format(root=str(ROOT), tests=str(ROOT / "tests"), corpus=str(corpus), out=str(out), executor=executor,
                               entities=entities)
    load = os.getloadavg()[0]
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import threading

    outputs: dict = {}
    reader = threading.Thread(target=lambda: outputs.update(zip(("stdout", "stderr"), proc.communicate())), daemon=True)
    reader.start()  # the pipes drained while the main thread samples
    peaks = watch(proc)
    reader.join()
    if proc.returncode != 0:
        raise SystemExit(f"build of {corpus} failed ({proc.returncode}):\n{outputs.get('stderr', '')[-3000:]}")
    result = json.loads(outputs["stdout"].strip().splitlines()[-1])
    return result | peaks | {"load_average_start": load, "load_average_end": os.getloadavg()[0]}


def _fit(xs: list[float], ys: list[float]) -> dict:
    """Least-squares slope (and intercept) of *ys* on *xs*, and the log-log exponent."""
    import math
    from statistics import linear_regression

    if len(xs) < 2:
        return {}
    slope, intercept = linear_regression(xs, ys)
    exponent = linear_regression([math.log(x) for x in xs], [math.log(y) for y in ys]).slope
    return {"slope_bytes_per_abstract": slope, "intercept_bytes": intercept, "loglog_exponent": exponent}


def _mib(b: float | None) -> str:
    return "-" if not b else f"{b / 2**20:,.0f}"


ROLES = ("client", "dask worker", "views writer (fork)", "store loader", "model process")


def synthetic(sizes: list[int], work: Path, executor: str, *, warm: bool = True, entities: bool = False, saved=None) -> dict:
    """For each size: a corpus (`synthetic_rows`), a cold build with the tests' hashing embedder
    on *executor* and a warm rebuild (extraction from the cache; graph.nt and stats.json deleted
    so that every stage after extraction runs again), each in a subprocess with every process's
    peak memory (`watch`); then the client's growth against N. *saved* (if given) is called with
    the rows so far after each size, so that a long run stopped early keeps what it measured.
    Without *entities* the builds skip typed entities (``entities=False``): the real entity model
    on synthetic text would add an hour at 200,000 to a benchmark of the stages after extraction."""
    pool = ml_abstracts(10**9)
    print(f"  pool: {len(pool):,} distinct ML abstracts; executor {executor}", flush=True)
    rows = []
    for n in sizes:
        corpus = work / f"synthetic-{n}"
        write_jsonl(synthetic_rows(n, pool), corpus / "abstracts.jsonl")
        out = work / f"synthetic-out-{n}"
        shutil.rmtree(out, ignore_errors=True)
        row: dict = {"abstracts": n, "corpus": str(corpus), "out": str(out)}
        row["cold"] = _synthetic_build(corpus, out, executor, entities)
        _print_build(n, "cold", row["cold"])
        if warm:
            for name in ("graph.nt", "stats.json"):  # force the full rebuild (not the unchanged shortcut)
                (out / name).unlink(missing_ok=True)
            row["warm"] = _synthetic_build(corpus, out, executor, entities)
            _print_build(n, "warm", row["warm"])
        with (out / "graph.nt").open("rb") as f:
            row["triples"] = sum(1 for _ in f)
        row["concepts"] = row["cold"]["concepts"]
        row["store_mib"] = _du(out / "store") / 2**20
        row |= {f"{name}_mib": (out / name).stat().st_size / 2**20 for name in ("graph.nt", "graph.json", "graph.html")}
        rows.append(row)
        if saved:
            saved({"executor": executor, "sizes": rows})
    report = {"executor": executor, "sizes": rows}
    phase = "warm" if warm else "cold"
    ns = [r["abstracts"] for r in rows]
    report["client_fit"] = {
        f"{phase}_vmhwm": _fit(ns, [r[phase]["vmhwm_kib"] * 1024 for r in rows]),
        "cold_vmhwm": _fit(ns, [r["cold"]["vmhwm_kib"] * 1024 for r in rows]),
    }
    report["client_ratio_to_smallest"] = {str(r["abstracts"]): r[phase]["vmhwm_kib"] / rows[0][phase]["vmhwm_kib"] for r in rows}
    print_synthetic(report)
    return report


def _print_build(n: int, phase: str, b: dict) -> None:
    after = b["seconds"] - (b.get("extracted_s") or 0)
    roles = ", ".join(f"{k} {_mib(v['hwm_peak'])}" + (f" (x{v['processes']})" if v["processes"] > 1 else "")
                      for k, v in sorted(b["roles"].items()))
    print(f"  {n:>7,} {phase}: {b['seconds']:7.1f} s ({after:6.1f} s after extraction; {b['extraction']}), "
          f"client VmHWM {b['vmhwm_kib'] / 1024:,.0f} MiB; peaks (VmHWM, MiB): {roles} (load {b['load_average_end']:.1f})", flush=True)
    print(f"           the stages that raised the client's peak: {_raised(b.get('stages', []))}", flush=True)


def _raised(stages: list, at_least: int = 16 * 2**20) -> str:
    """The stages of the build process (`kg.BuildResult.peaks`; not the views writer's) after which its peak memory
    was at least *at_least* bytes above the stage's before: "name peak MiB (+rise)", in build order."""
    from kg.pipeline.timeline import VIEWS

    out, last = [], 0
    for name, _, peak in stages:
        if name.startswith(VIEWS) or peak is None:
            continue
        if peak - last >= at_least:
            out.append(f"{name} {_mib(peak)} (+{_mib(peak - last)})")
        last = max(last, peak)
    return ", ".join(out) or "-"


def print_synthetic(report: dict) -> None:
    """The table: per size, timing and counts, then peak memory per role (MiB, VmHWM as sampled;
    the client's as it read it itself at the end), cold and warm; then the client's fit."""
    rows = report["sizes"]
    print("\n| abstracts | wall, cold | of it after extraction | warm rebuild | of it after extraction | extraction abstracts/s | triples | concepts |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        c, w = r["cold"], r.get("warm")
        ext = c["extracted_s"] - c["read_s"] if c.get("extracted_s") and c.get("read_s") is not None else None
        warm = f"{w['seconds']:.1f} s | {w['seconds'] - w['extracted_s']:.1f} s" if w else "- | -"
        print(f"| {r['abstracts']:,} | {c['seconds']:.1f} s | {c['seconds'] - c['extracted_s']:.1f} s | {warm} | "
              f"{r['abstracts'] / ext if ext else float('nan'):.1f} | {r['triples']:,} | {r['concepts']:,} |")
    print("\n| abstracts | build | client (VmHWM) | client sampled | largest dask worker | views writer (fork) | store loader | model process | other | all processes summed |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        for phase in ("cold", "warm"):
            b = r.get(phase)
            if not b:
                continue
            roles = b["roles"]
            cells = [_mib(b["vmhwm_kib"] * 1024), _mib(roles.get("client", {}).get("rss_peak"))]
            for role in ROLES[1:]:
                v = roles.get(role)
                cells.append(_mib(v["hwm_peak"]) + (f" (x{v['processes']})" if v and v["processes"] > 1 else "") if v else "-")
            other = [f"{k} {_mib(v['hwm_peak'])}" for k, v in roles.items() if k not in ROLES]
            cells += [", ".join(other) or "-", _mib(b["all_processes_rss_peak"])]
            print(f"| {r['abstracts']:,} | {phase} | " + " | ".join(cells) + " |")
    for name, fit in report["client_fit"].items():
        if fit:
            print(f"\nclient peak ({name}) against N: {fit['slope_bytes_per_abstract']:,.0f} bytes per abstract "
                  f"(intercept {_mib(fit['intercept_bytes'])} MiB), log-log exponent {fit['loglog_exponent']:.2f}")
    print("client peak / the smallest size's (same run): "
          + ", ".join(f"{n}: {x:.2f}" for n, x in report["client_ratio_to_smallest"].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=None,
                        help="corpus sizes (default 1000 5000 10000; with --synthetic 10000 20000 40000)")
    parser.add_argument("--synthetic", action="store_true",
                        help="only the synthetic part: corpora of any size, cold and warm builds with the hashing "
                             "embedder, peak memory per process (issue 24)")
    parser.add_argument("--executor", default="dask-local:2", help="with --synthetic: the build's executor")
    parser.add_argument("--entities", action="store_true",
                        help="with --synthetic: typed entities too (the real entity model: ~1 h at 200,000 on 2 cores)")
    parser.add_argument("--cold-only", action="store_true",
                        help="with --synthetic: only the cold build of each size (the warm rebuild doubles a 200k run)")
    parser.add_argument("--sample", type=int, default=500, help="abstracts for the per-worker extraction figure")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench-scaling"))
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--precision", nargs="+", default=["fp32", "int8"], choices=["fp32", "int8"])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    report: dict = {"machine": machine()}
    print(f"machine: {report['machine']}")
    if args.synthetic:
        report["command"] = ["python", "-m", "benchmarks.scaling", *(sys.argv[1:] if argv is None else argv)]
        report["load_average_start"] = os.getloadavg()
        print(f"== synthetic corpora (seed {SEED}), kg.build with the hashing embedder, peak memory per process", flush=True)

        def saved(part: dict) -> None:
            if args.json:
                args.json.write_text(json.dumps(report | {"synthetic": part, "load_average_end": os.getloadavg()}, indent=2) + "\n",
                                     encoding="utf-8")

        report["synthetic"] = synthetic(args.sizes or [10000, 20000, 40000], args.work, args.executor,
                                        warm=not args.cold_only, entities=args.entities, saved=saved)
        saved(report["synthetic"])
        return 0
    if not args.skip_extraction:
        print("== extraction per worker (real model, 1 torch thread)", flush=True)
        report["extraction_per_worker"] = []
        for precision in args.precision:
            e = extraction_per_worker(args.sample, precision)
            print(f"  {precision}: {e['abstracts']} abstracts: {e['cpu_s_per_1000']:.0f} CPU s and {e['wall_s_per_1000']:.0f} wall s "
                  f"per 1,000, peak {e['peak_mib']:.0f} MiB (load {e['load_average']:.1f})", flush=True)
            report["extraction_per_worker"].append(e)
    print("== stages after extraction (one process), by corpus size", flush=True)
    report["stages_after_extraction"] = stages_after_extraction(args.sizes or [1000, 5000, 10000], args.work)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
