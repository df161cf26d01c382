"""Distributed extraction: executor specs, partitions, Dask runs equal to local ones, a killed
worker survived, checkpoints per partition, no processes left behind."""

from __future__ import annotations

import json
import os
import signal

import psutil
import pytest
from rdflib import Graph
from rdflib.compare import isomorphic
from support import SEEDS

import kg
from kg.errors import ExecutorError
from kg.scale.executor import (
    DEFAULT_PARTITION_SIZE,
    ExecutorSpec,
    open_executor,
    parse_executor,
    partitions,
)

SMALL = 8  # documents per partition: 5 partitions over the 38 seed abstracts


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", ExecutorSpec("local")),
        (" local ", ExecutorSpec("local")),
        ("dask-local:3", ExecutorSpec("dask-local", workers=3)),
        ("dask://10.0.0.5:8786", ExecutorSpec("dask", address="tcp://10.0.0.5:8786")),
        ("dask://scheduler.cluster", ExecutorSpec("dask", address="tcp://scheduler.cluster:8786")),
        ("dask://[::1]:9000", ExecutorSpec("dask", address="tcp://[::1]:9000")),
    ],
)
def test_specs_parse_and_print_back(spec, expected):
    parsed = parse_executor(spec)
    assert parsed == expected and parsed.partition_size == DEFAULT_PARTITION_SIZE
    assert parse_executor(str(parsed)) == parsed


def test_dask_local_alone_means_one_worker_per_core():
    assert parse_executor("dask-local").workers == len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    "spec", ["", "dask", "Local", "dask-local:0", "dask-local:two", "dask-local:-1", "dask://", "dask://host:99999",
             "dask://host:8786/path", "spark://host:7077", "tcp://host:8786"],
)
def test_bad_specs_are_executor_errors(spec):
    with pytest.raises(ExecutorError, match="executor"):
        parse_executor(spec)


def test_specs_made_in_python_are_checked():
    assert str(ExecutorSpec("dask", address="tcp://10.0.0.5:8786")) == "dask://10.0.0.5:8786"
    for bad in ({"kind": "spark"}, {"kind": "dask"}, {"kind": "dask-local", "workers": 0}, {"kind": "local", "partition_size": 0}):
        with pytest.raises(ExecutorError):
            ExecutorSpec(**bad)


def test_partition_size_is_settable_and_checked():
    assert parse_executor("dask-local:2", partition_size=8) == ExecutorSpec("dask-local", workers=2, partition_size=8)
    with pytest.raises(ExecutorError, match="partition size"):
        parse_executor("local", partition_size=0)


def test_partitions_are_consecutive_and_in_order():
    items = list(range(10))
    assert partitions(items, 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert partitions(items, 10) == [items] and partitions([], 3) == []


def test_a_bad_executor_through_the_cli_is_a_usage_error(run_cli, tmp_path):
    result = run_cli("build", str(SEEDS), "--out", str(tmp_path / "out"), "--executor", "spark://x")
    assert result.code == 2
    assert "Invalid value for '--executor': executor 'spark://x' is not one of local, dask-local[:N] or dask://HOST:PORT" in result.err
    assert not (tmp_path / "out").exists()


def test_an_unreachable_scheduler_is_one_line_and_exit_2(run_cli, tmp_path, monkeypatch):
    import kg.scale.executor

    monkeypatch.setattr(kg.scale.executor, "CONNECT_TIMEOUT", 1)
    result = run_cli("build", str(SEEDS), "--out", str(tmp_path / "out"), "--executor", "dask://127.0.0.1:1", "--quiet")
    assert result.code == 2, result.err
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert errors == [line for line in result.err.splitlines() if "127.0.0.1:1" in line] and len(errors) == 1
    assert errors[0].startswith("error: executor dask://127.0.0.1:1: no Dask scheduler answers at tcp://127.0.0.1:1")
    assert not (tmp_path / "out" / "graph.nt").exists()


def _interrupt_after_first_partition():
    calls = []

    def progress(n):
        calls.append(n)
        raise KeyboardInterrupt

    return progress, calls


def _extraction(result) -> dict:
    """How many abstracts were computed and served from the cache (BuildResult.extraction,
    or stats["extraction"] where a build reports it there)."""
    return getattr(result, "extraction", None) or result.stats["extraction"]


def _same_outputs(a, b):
    assert (a / "keyphrases.jsonl").read_bytes() == (b / "keyphrases.jsonl").read_bytes()
    assert (a / "entities.jsonl").read_bytes() == (b / "entities.jsonl").read_bytes()  # typed entities on the same executor
    assert (a / "graph.json").read_bytes() == (b / "graph.json").read_bytes()  # the map's positions and clusters too
    assert isomorphic(Graph().parse(a / "graph.nt", format="nt"), Graph().parse(b / "graph.nt", format="nt"))


def test_an_interrupted_build_resumes_from_its_finished_partitions(tmp_path, hash_embedder, nlp):
    spec = parse_executor("local", partition_size=SMALL)
    progress, calls = _interrupt_after_first_partition()
    with pytest.raises(KeyboardInterrupt):
        kg.build([SEEDS], tmp_path / "out", embedder=hash_embedder, nlp=nlp, executor=spec, progress=progress, store=False)
    assert calls == [SMALL] and not (tmp_path / "out" / "graph.nt").exists()
    resumed = kg.build([SEEDS], tmp_path / "out", embedder=hash_embedder, nlp=nlp, executor=spec, store=False)
    assert _extraction(resumed) == {"computed": 38 - SMALL, "from_cache": SMALL}
    clean = kg.build([SEEDS], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, executor=spec, cache=False, store=False)
    _same_outputs(resumed.out, clean.out)


def _children() -> set[int]:
    """Live child processes, less Python's multiprocessing resource tracker (one per process,
    started with the first worker and kept until the interpreter exits: not a worker)."""
    live = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and "multiprocessing.resource_tracker" not in " ".join(p.cmdline()):
                live.add(p.pid)
        except psutil.NoSuchProcess:
            pass
    return live


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_dask_local_interrupted_leaves_no_process_and_resumes(tmp_path, hash_embedder, nlp):
    """The tests' hashing embedder is pickled to the workers (they import it from tests/support.py)."""
    before = _children()
    seen: set[int] = set()

    def progress(n):
        seen.update(_children() - before)
        raise KeyboardInterrupt

    spec = parse_executor("dask-local:2", partition_size=SMALL)
    with pytest.raises(KeyboardInterrupt):
        kg.build([SEEDS], tmp_path / "out", embedder=hash_embedder, nlp=nlp, executor=spec, progress=progress, store=False)
    assert len(seen) >= 2  # the two worker processes were running
    assert not any(_alive(pid) for pid in seen)
    assert _children() <= before
    resumed = kg.build([SEEDS], tmp_path / "out", embedder=hash_embedder, nlp=nlp, executor="local", store=False)
    assert _extraction(resumed)["from_cache"] >= SMALL
    clean = kg.build([SEEDS], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, cache=False, store=False)
    _same_outputs(resumed.out, clean.out)


@pytest.fixture(scope="module")
def local_small_build(tmp_path_factory, default_embedder, nlp):
    """The seeds with the real model, in process, in partitions of SMALL documents."""
    out = tmp_path_factory.mktemp("local-small")
    return kg.build([SEEDS], out, embedder=default_embedder, nlp=nlp, executor=parse_executor("local", partition_size=SMALL), store=False)


@pytest.mark.model
def test_dask_local_gives_the_local_results_survives_a_killed_worker_and_leaves_no_process(tmp_path, local_small_build):
    """One run (workers load the model in a few seconds each): a worker with partitions still to
    finish is killed after the first partition; they run again elsewhere and nothing changes."""
    before = _children()
    seen: set[int] = set()
    killed: list[int] = []
    with open_executor("dask-local:2", partition_size=SMALL) as executor:
        client = executor.client

        def progress(n):
            seen.update(_children() - before)
            if killed:
                return
            busy = [worker for worker, keys in client.processing().items() if keys]
            if busy:
                pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        result = kg.build([SEEDS], tmp_path / "out", executor=executor, progress=progress, store=False)
        assert killed and not _alive(killed[0])
    assert _extraction(result) == {"computed": 38, "from_cache": 0}
    _same_outputs(result.out, local_small_build.out)
    assert json.loads((result.out / "stats.json").read_text()) == json.loads((local_small_build.out / "stats.json").read_text())
    assert len(seen) >= 2 and _children() <= before  # the workers, the restarted one too, are gone
    assert not any(_alive(pid) for pid in seen)


def test_dask_local_workers_keep_freed_memory_for_the_next_batch():
    # Dask's default MALLOC_TRIM_THRESHOLD_=65536 made every batch fault its activations in afresh
    # (a 1,000-abstract build: 71 s of system time instead of 18.5); kg's workers run without it,
    # and the setting is Dask's own again once the cluster is closed.
    import dask
    import distributed  # noqa: F401  (its configuration)

    before = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    with open_executor("dask-local:1") as executor:
        seen = executor.client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OMP_NUM_THREADS")))
    assert list(seen.values()) == [(None, "1")]
    assert dask.config.get("distributed.nanny.pre-spawn-environ") == before


def test_the_model_process_runs_calls_there_and_raises_their_errors_here():
    from kg.errors import ModelError
    from kg.scale.executor import ModelProcess

    before = _children()
    with ModelProcess.start("int8") as there:
        assert there.call(os.getpid) != os.getpid()
        assert there.call(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]
        with pytest.raises(ValueError, match="invalid literal for int"):
            there.call(int, "x")
        with pytest.raises(ModelError, match=r"^the process running the model stopped \(exit code 7\)$"):
            there.call(os._exit, 7)
    assert _children() <= before


def test_a_model_error_there_is_the_same_model_error_here():
    from kg.errors import ModelError
    from kg.scale.executor import ModelProcess

    with ModelProcess.start("fp16") as there:  # its loading failed at start: the request that needs the model says why
        with pytest.raises(ModelError, match="^unknown precision 'fp16'; use fp32 or int8$"):
            there.embed(["gradient descent"])
        assert there.call(len, "still answers") == 13


def test_where_no_process_can_start_the_model_runs_in_this_one(monkeypatch):
    import subprocess

    from kg.scale.executor import ModelProcess

    def no_process(*args, **kwargs):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    fds = set(os.listdir("/proc/self/fd"))
    assert ModelProcess.start("int8") is None
    assert set(os.listdir("/proc/self/fd")) <= fds  # its pipes are closed


@pytest.mark.model
def test_the_model_process_extracts_and_embeds_as_this_process_does(real_embedder, nlp):
    from kg.extract.keyphrases import Settings
    from kg.scale.executor import ModelProcess, extract_partition
    from kg.text.sources import read_papers

    items = [(p.id, p.document) for p in read_papers([SEEDS]).papers[:5]]
    phrases = ["stochastic gradient descent", "large language models", "zeroth-order optimization"]
    parts = [items[:2], items[2:4], items[4:]]
    fp32 = Settings(precision="fp32")  # the real_embedder fixture's
    with ModelProcess.start("fp32") as there:
        extracted = [result for _, result in there.map_partitions(extract_partition, parts, settings=fp32)]
        tagged_here = list(there.extract(parts, settings=fp32, nlp=nlp))  # spaCy here, the model there
        vectors = there.embed(phrases)
    expected = [extract_partition(part, settings=fp32, embedder=real_embedder, nlp=nlp) for part in parts]
    assert extracted == expected and tagged_here == expected
    assert vectors.dtype == real_embedder.embed(phrases).dtype and (vectors == real_embedder.embed(phrases)).all()


@pytest.mark.model
def test_a_build_with_the_packaged_model_runs_it_in_a_model_process_and_stops_it(tmp_path, monkeypatch, local_small_build):
    from kg.scale.executor import ModelProcess

    started = []
    start = ModelProcess.start

    def recorded(*args, **kwargs):
        started.append(start(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(ModelProcess, "start", recorded)
    before = _children()
    spec = parse_executor("local", partition_size=SMALL)  # as local_small_build's (the batches make the last digits)
    result = kg.build([SEEDS], tmp_path / "out", executor=spec, store=False)
    assert _extraction(result) == {"computed": 38, "from_cache": 0}
    _same_outputs(result.out, local_small_build.out)
    assert (result.out / "graph.nt").read_bytes() == (local_small_build.out / "graph.nt").read_bytes()
    again = kg.build([SEEDS], tmp_path / "out", executor=spec, store=False)  # nothing changed: no model process started
    assert again.unchanged and len(started) == 1
    assert all(proc._proc.poll() is not None for proc in started) and _children() <= before


def test_under_dask_local_a_few_documents_go_to_the_model_process_and_many_to_the_cluster():
    from kg.pipeline.extraction import DASK_LOCAL_MIN_DOCUMENTS, runner_for

    models = object()  # stands for a started ModelProcess
    few, many = DASK_LOCAL_MIN_DOCUMENTS - 1, DASK_LOCAL_MIN_DOCUMENTS
    assert runner_for("local", models, many) is models
    assert runner_for("dask-local:2", models, few) is models
    assert runner_for("dask-local:2", models, many) == "dask-local:2"
    assert runner_for(parse_executor("dask-local:2"), models, many) == parse_executor("dask-local:2")
    assert runner_for("dask://127.0.0.1:8786", models, few) == "dask://127.0.0.1:8786"  # a cluster of one's own: always used
    assert runner_for("dask-local:2", None, few) == "dask-local:2"  # no model process could be started
    with open_executor("local") as opened:  # an open executor is used as given
        assert runner_for(opened, models, few) is opened


@pytest.mark.model
def test_a_dask_local_build_of_a_few_documents_starts_no_cluster(tmp_path, monkeypatch, local_small_build):
    """The 38 seeds are fewer than DASK_LOCAL_MIN_DOCUMENTS: the model process extracts them, with
    the outputs of any other executor, and no Dask worker is started."""
    import kg.scale.executor

    def no_cluster(*args, **kwargs):
        raise AssertionError("a Dask cluster was started for 38 documents")

    monkeypatch.setattr(kg.scale.executor, "open_executor", no_cluster)
    before = _children()
    result = kg.build([SEEDS], tmp_path / "out", executor=parse_executor("dask-local:2", partition_size=SMALL), store=False)
    assert _extraction(result) == {"computed": 38, "from_cache": 0}
    assert (result.out / "graph.nt").read_bytes() == (local_small_build.out / "graph.nt").read_bytes()
    assert (result.out / "keyphrases.jsonl").read_bytes() == (local_small_build.out / "keyphrases.jsonl").read_bytes()
    assert (result.out / "entities.jsonl").read_bytes() == (local_small_build.out / "entities.jsonl").read_bytes()
    assert _children() <= before


def _dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # dead, not reaped yet
    except psutil.NoSuchProcess:
        return True


_HOLDS_A_MODEL_PROCESS = """
import sys, time
from kg.scale.executor import ModelProcess
models = ModelProcess.start("int8")
print(models._proc.pid, flush=True)
time.sleep(600)
"""


def test_the_model_process_dies_with_a_killed_build():
    """SIGKILL of the process that started a ModelProcess (kg build) kills the model process at
    once (PR_SET_PDEATHSIG), not once it has loaded the model and seen its pipe closed."""
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c", _HOLDS_A_MODEL_PROCESS], stdout=subprocess.PIPE, text=True,
                              env=os.environ | {"PYTHONPATH": os.path.dirname(os.path.dirname(kg.__file__))})
    # it is still loading torch and the model (~5 s) if it did not die within 2 s
    assert _child_dies_with(parent, seconds=2.0)


def _child_dies_with(parent, *, seconds: float) -> bool:
    """Whether the child whose pid *parent* prints first dies within *seconds* of *parent*'s SIGKILL
    (a child still alive then is killed, so no test leaves one behind)."""
    import time

    child = int(parent.stdout.readline())
    assert not _dead(child)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + seconds
    while not _dead(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = not _dead(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    return not alive


_HOLDS_A_WRITER = """
import os, sys, time
from pathlib import Path
which, fifo, folder = sys.argv[1:]
if which == "store":  # a store loading a FIFO: it would wait for a writer for ever
    from kg.sparql.store import StoreLoad
    loading = StoreLoad(folder, fifo)
    print(loading._process.pid, flush=True)
else:  # the forked writer of a build's views
    from kg.pipeline.fork import Forked
    side = Forked(lambda: time.sleep(600))
    print(side._proc.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("which", ["store", "views"])
def test_the_store_loader_and_the_views_writer_die_with_a_killed_build(tmp_path, which):
    import subprocess
    import sys

    fifo = tmp_path / "graph.nt.fifo"
    os.mkfifo(fifo)
    parent = subprocess.Popen([sys.executable, "-c", _HOLDS_A_WRITER, which, str(fifo), str(tmp_path)],
                              stdout=subprocess.PIPE, text=True,
                              env=os.environ | {"PYTHONPATH": os.path.dirname(os.path.dirname(kg.__file__))})
    assert _child_dies_with(parent, seconds=5.0)


def test_a_cluster_kg_started_is_stopped_before_the_merge_that_runs_in_the_build_process(tmp_path, monkeypatch, hash_embedder, nlp):
    # dask-local's rounds after extraction run here (kg.pipeline.stages._rounds): its idle workers, and the scheduler's
    # state in this process, would only hold memory through the merge and specificity
    import kg.pipeline.stages

    before = _children()
    seen: set[int] = set()
    at_merge: list[set[int]] = []
    real = kg.pipeline.stages.merge_concepts

    def merge(*args, **kwargs):
        at_merge.append({pid for pid in seen if _alive(pid)})
        return real(*args, **kwargs)

    monkeypatch.setattr(kg.pipeline.stages, "merge_concepts", merge)
    result = kg.build([SEEDS], tmp_path / "out", embedder=hash_embedder, nlp=nlp, entities=False, store=False,
                      executor=parse_executor("dask-local:2", partition_size=SMALL),
                      progress=lambda n: seen.update(_children() - before))
    assert len(seen) >= 2 and at_merge == [set()]  # the workers ran the extraction, and were gone when the merge began
    stages = [name for name, _ in result.timings]
    assert stages.index("extract: computed") < stages.index("stop executor") < stages.index("merge")
    assert _children() <= before
