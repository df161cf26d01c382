"""The stage timeline of a build (`BuildResult.timings`, ``kg build --timings``): where a rebuild's time goes."""

import json
import subprocess
import sys

import pytest

import kg
from kg.pipeline.timeline import TOTAL, VIEWS, Timeline

# What a build that extracts (no entities) and loads the store times, in the order the stages end.
STAGES = ["setup", "up-to-date check", "start model process", "read", "extract: cache lookup", "extract: computed", "merge", "specificity",
          "paper labels", "graph", "keyphrases.jsonl", "release inputs", "graph: co-occurrences", "map: clusters", "fork views writer",
          "rdf: graph.nt, graph.ttl, graph.jsonld", "wait for views",
          *(VIEWS + name for name in ("map layout", "stats figures", "graph.html", "graph.json", "stats.json", "explorer.json",
                                      "explorer-search.sqlite", "graph.gexf", "map.json")),  # (the map files' own process last)
          "wait for store", "rename into place", "store finish", TOTAL]


def test_a_timeline_keeps_each_span_in_the_order_they_end_and_the_total_last():
    timeline = Timeline()
    with timeline.stage("a"):
        pass
    with pytest.raises(ValueError), timeline.stage("failed"):
        raise ValueError
    opened = []
    with timeline.files(lambda name: _recording(opened, name))("x.json") as f:
        assert f == "file x.json"
    timeline.extend([("b", 1.5)], VIEWS)
    spans = timeline.done()
    assert [name for name, _ in spans] == ["a", "failed", "x.json", VIEWS + "b", TOTAL]
    peaks = timeline.peaks()
    assert [name for name, _ in peaks] == [name for name, _ in spans]
    assert dict(peaks)[VIEWS + "b"] is None  # measured elsewhere, and its peak not given
    assert opened == ["x.json"] and all(seconds >= 0 for _, seconds in spans)
    assert spans[-1][1] >= sum(seconds for name, seconds in spans[:3])


def _recording(opened, name):
    from contextlib import contextmanager

    @contextmanager
    def cm():
        opened.append(name)
        yield f"file {name}"

    return cm()


def test_a_build_carries_its_stage_timings_and_kg_build_timings_prints_them(run_cli, tmp_path, monkeypatch, hash_embedder, nlp):
    rows = [{"abstract": "Graph neural networks pass messages along the edges of molecules."},
            {"abstract": "Protein folding is predicted with transformers from amino acid sequences."}]
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = []
    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: results.append(real(*a, **k, embedder=hash_embedder, nlp=nlp)) or results[-1])
    run = run_cli("build", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "out"), "--no-entities", "--timings", "-q")
    assert run.code == 0, run.err
    (result,) = results
    assert [name for name, _ in result.timings] == STAGES
    assert all(seconds >= 0 for _, seconds in result.timings)
    total = dict(result.timings)[TOTAL]
    assert total >= sum(seconds for name, seconds in result.timings if name != TOTAL and not name.startswith(VIEWS))
    table = run.err.splitlines()
    assert table[0].split() == ["stage", "seconds", "share", "peak", "MiB"]
    assert [line[:len(name)] for line, name in zip(table[1:], STAGES)] == STAGES
    total_row = table[len(STAGES)].split()
    assert total_row[0] == TOTAL and total_row[2] == "100.0%"
    # the peak memory column: this process's high-water mark in MiB at each stage's end, never falling in one process
    assert [name for name, _ in result.peaks] == STAGES
    mine = [peak for name, peak in result.peaks if not name.startswith(VIEWS)]
    assert all(isinstance(p, int) and p > 10 * 2**20 for p in mine) and mine == sorted(mine)
    assert float(total_row[3].replace(",", "")) == pytest.approx(dict(result.peaks)[TOTAL] / 2**20, abs=0.5)
    map_files = [VIEWS + "graph.gexf", VIEWS + "map.json"]  # written by a process forked from the views writer
    views = [peak for name, peak in result.peaks if name.startswith(VIEWS) and name not in map_files]
    assert all(isinstance(p, int) and p > 10 * 2**20 for p in views) and views == sorted(views)
    maps = [peak for name, peak in result.peaks if name in map_files]
    assert all(isinstance(p, int) and p > 10 * 2**20 for p in maps) and maps == sorted(maps)
    assert "stats.json" in (tmp_path / "out" / ".cache" / "manifest.json").read_text()  # the timings are in no output
    assert "seconds" not in (tmp_path / "out" / "stats.json").read_text()

    again = real([tmp_path / "x.jsonl"], tmp_path / "out", embedder=hash_embedder, nlp=nlp, entities=False)
    assert again.unchanged and [name for name, _ in again.timings] == ["setup", "up-to-date check", "store check", TOTAL]


def test_peaks_follow_memory_a_stage_takes_and_those_given_by_another_process():
    # in a fresh process: this one's high-water mark may already be above what the stage takes
    code = """
import json
from kg.pipeline.timeline import VIEWS, Timeline
timeline = Timeline()
with timeline.stage("small"):
    pass
with timeline.stage("big"):
    held = b"x" * (128 * 2**20)  # written: resident
del held
timeline.extend([("elsewhere", 0.1)], VIEWS, peaks=[("elsewhere", 123)])
timeline.done()
print(json.dumps(timeline.peaks()))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    peaks = dict(json.loads(run.stdout))
    assert peaks["big"] - peaks["small"] >= 96 * 2**20  # (the mark may be above the resident memory at "small"s end)
    assert peaks[VIEWS + "elsewhere"] == 123 and peaks[TOTAL] >= peaks["big"]
