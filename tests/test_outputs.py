"""Outputs are written atomically and survive a failed build (fast: the test embedder)."""

import hashlib
import json
from pathlib import Path

import pytest

import kg
import kg.view.page
from kg.errors import OutputError


def abstracts(tmp_path, n=3):
    f = tmp_path / "in.txt"
    f.write_text("ICML 2026 Papers\n\n" + "\n\n".join(
        f"Paper {i} studies graph neural networks and message passing for molecule property prediction number {i}." for i in range(n)))
    return f


def test_a_failed_build_leaves_the_previous_outputs_whole(tmp_path, hash_embedder, nlp, monkeypatch):
    out = tmp_path / "out"
    first = kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert set(before) == {p.name for p in first.files}

    def broken(*args, **kwargs):
        raise KeyboardInterrupt  # as if Ctrl-C hit while the HTML was rendered

    monkeypatch.setattr(kg.view.page, "render_page", broken)
    with pytest.raises(KeyboardInterrupt):
        kg.build([abstracts(tmp_path, 5)], out, embedder=hash_embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_killed_view_writer_is_an_output_error_and_leaves_the_previous_outputs_whole(tmp_path, hash_embedder, nlp, monkeypatch):
    # The HTML, graph.json, keyphrases.jsonl and stats.json are written by a forked process while
    # the build writes the RDF; if that process dies, the build says so and changes nothing.
    out = tmp_path / "out"
    kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    killed_in_a_fork(tmp_path, out, monkeypatch, kg.view.page, "render_page",
                     r"the process writing the outputs stopped \(exit code 3\); the previous outputs are unchanged",
                     embedder=hash_embedder, nlp=nlp)


def killed_in_a_fork(tmp_path, out, monkeypatch, module, name: str, stopped: str, *, embedder, nlp) -> None:
    """A build whose *module*.*name* kills the forked process it runs in fails with an OutputError matching
    *stopped*, and leaves the outputs in *out* as they were, with no temporary file."""
    import os

    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    parent = os.getpid()

    def dies(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(3)
        raise AssertionError(f"{name} runs in a forked process")

    monkeypatch.setattr(module, name, dies)
    with pytest.raises(OutputError, match=stopped):
        kg.build([abstracts(tmp_path, 5)], out, embedder=embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # no temporary file either


def test_the_map_files_are_written_beside_the_other_views_and_their_writer_killed_changes_nothing(
        tmp_path, hash_embedder, nlp, monkeypatch):
    # graph.gexf and map.json are written by a process the views writer forks once the map is laid out
    import os

    import kg.graph.mapfiles

    out = tmp_path / "out"
    real_gexf, real_page = kg.graph.mapfiles.write_gexf, kg.view.page.render_page

    def gexf(*args, **kwargs):
        (tmp_path / "gexf-writer").write_text(str(os.getpid()))
        return real_gexf(*args, **kwargs)

    def page(*args, **kwargs):
        (tmp_path / "page-writer").write_text(str(os.getpid()))
        return real_page(*args, **kwargs)

    monkeypatch.setattr(kg.graph.mapfiles, "write_gexf", gexf)
    monkeypatch.setattr(kg.view.page, "render_page", page)
    first = kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    writers = {int((tmp_path / name).read_text()) for name in ("gexf-writer", "page-writer")}
    assert len(writers | {os.getpid()}) == 3
    assert {"graph.gexf", "map.json"} <= {p.name for p in first.files}
    killed_in_a_fork(tmp_path, out, monkeypatch, kg.graph.mapfiles, "write_gexf",
                     r"the process writing graph.gexf and map.json stopped \(exit code 3\); the previous outputs",
                     embedder=hash_embedder, nlp=nlp)


def test_a_write_error_is_an_output_error_and_leaves_no_temporary_file(tmp_path, hash_embedder, nlp, monkeypatch):
    out = tmp_path / "out"
    kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    import os

    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        if ".cache" not in Path(dst).parts:  # an output's (the read cache's entry is renamed before)
            calls.append(dst)
            if len(calls) == 1:
                raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputError, match="cannot write the outputs \\(No space left on device\\); the previous outputs are unchanged"):
        kg.build([abstracts(tmp_path, 4)], out, embedder=hash_embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_rebuild_with_the_test_embedder_is_byte_identical(tmp_path, hash_embedder, nlp):
    a = kg.build([abstracts(tmp_path)], tmp_path / "a", embedder=hash_embedder, nlp=nlp)
    b = kg.build([abstracts(tmp_path)], tmp_path / "b", embedder=hash_embedder, nlp=nlp)
    for name in ("graph.nt", "graph.ttl", "keyphrases.jsonl"):
        assert (a.out / name).read_bytes() == (b.out / name).read_bytes()


def test_the_cache_recomputes_only_what_changed_and_matches_a_clean_build(tmp_path, hash_embedder, nlp):
    from kg.extract.keyphrases import Settings

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("ICML 2026\n\nGraph neural networks pass messages along edges.\n\nDiffusion models generate images.\n")
    out = tmp_path / "out"
    first = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert first.extraction == {"computed": 2, "from_cache": 0}
    (src / "b.txt").write_text("ICLR 2026\n\nSparse autoencoders find features in language models.\n")
    second = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert second.extraction == {"computed": 1, "from_cache": 2}
    clean = kg.build([src], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, cache=False)
    for name in ("graph.nt", "graph.ttl", "keyphrases.jsonl", "graph.json"):
        assert (out / name).read_bytes() == (clean.out / name).read_bytes(), name
    unchanged = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert unchanged.extraction == {"computed": 0, "from_cache": 3}
    assert "extraction" not in json.loads((out / "stats.json").read_text())  # the same whatever the cache held
    other = kg.build([src], out, embedder=hash_embedder, nlp=nlp, settings=Settings(top_n=3))
    assert other.extraction == {"computed": 3, "from_cache": 0}


def test_a_damaged_cache_is_set_aside(tmp_path, hash_embedder, nlp):
    out = tmp_path / "out"
    (out / ".cache").mkdir(parents=True)
    (out / ".cache" / "extractions.sqlite").write_bytes(b"this is not a database" * 100)
    result = kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    assert result.extraction["computed"] == 3
    assert (out / ".cache" / "extractions.damaged").exists()


@pytest.mark.parametrize("value", ["not json {", '{"k": 5}', '[1, 2]', '{"k": [["a", "b"]], "d": []}', '{"k": [], "d": [[1]]}',
                                   "[" * 100_000])
def test_a_damaged_cache_row_is_recomputed_and_the_others_read(tmp_path, hash_embedder, nlp, value):
    """A row of the cache that is not what kg writes is a cache miss: that abstract is extracted
    again (and its row replaced), the others come from the cache, the outputs are a clean build's."""
    import sqlite3

    src = abstracts(tmp_path)
    out = tmp_path / "out"
    kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    db = sqlite3.connect(out / ".cache" / "extractions.sqlite")
    with db:
        (key,) = db.execute("SELECT key FROM extraction ORDER BY key LIMIT 1").fetchone()
        db.execute("UPDATE extraction SET value = ? WHERE key = ?", (value, key))
    db.close()
    (out / ".cache" / "manifest.json").unlink()
    again = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert again.extraction == {"computed": 1, "from_cache": 2}
    clean = kg.build([src], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, cache=False)
    assert (out / "graph.nt").read_bytes() == (clean.out / "graph.nt").read_bytes()
    assert kg.build([src], tmp_path / "out", embedder=hash_embedder, nlp=nlp).unchanged


@pytest.mark.parametrize("name", [".cache/manifest.json", "stats.json", "store/source.json"])
@pytest.mark.parametrize("content", [b"[" * 100_000, b"[1, 2]", b'{"outputs": {}, "size": ' + b"9" * 5000 + b"}", b"\xff\xfe\x00"])
def test_a_damaged_file_kg_wrote_for_itself_means_rebuild_not_a_traceback(tmp_path, hash_embedder, nlp, run_cli, name, content):
    """The manifest, stats.json and the store's source.json nested too deep, of the wrong shape,
    with a number Python will not make, or not text: the rebuild builds (or reloads the store),
    and kg query reads the graph."""
    src = abstracts(tmp_path)
    out = tmp_path / "out"
    kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    (out / name).write_bytes(content)
    again = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert not again.unchanged or name == "store/source.json"
    (out / name).write_bytes(content)
    result = run_cli("query", "top-concepts", "--graph", str(out / "graph.ttl"), "--format", "csv")
    assert result.code == 0 and result.out.startswith("concept,"), result.err


def test_a_rebuild_with_nothing_changed_rewrites_nothing(tmp_path, hash_embedder, nlp):
    src = abstracts(tmp_path)
    out = tmp_path / "out"
    first = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert not first.unchanged and (out / ".cache" / "manifest.json").is_file()
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir() if p.is_file()}
    again = kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert again.unchanged and again.extraction == {"computed": 0, "from_cache": 3}
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir() if p.is_file()} == before
    assert again.stats == first.stats and sorted(again.graph.nodes) == sorted(first.graph.nodes)  # graph from graph.json
    clean = kg.build([src], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, cache=False)
    for name in before:
        assert (clean.out / name).read_bytes() == before[name][1], name
    # An output changed or gone, the base IRI or an input changed: a real build again.
    (out / "graph.html").write_text("edited")
    assert not kg.build([src], out, embedder=hash_embedder, nlp=nlp).unchanged
    assert (out / "graph.html").read_bytes() == before["graph.html"][1]
    assert not kg.build([src], out, embedder=hash_embedder, nlp=nlp, base="https://example.com/x/").unchanged
    assert kg.build([src], out, embedder=hash_embedder, nlp=nlp, base="https://example.com/x/").unchanged
    src.write_text(src.read_text() + "\n\nA new abstract about diffusion models for images.\n")
    assert not kg.build([src], out, embedder=hash_embedder, nlp=nlp).unchanged


def test_a_rebuild_with_nothing_changed_reads_no_abstract_and_repeats_the_builds_warnings(tmp_path, hash_embedder, nlp,
                                                                                          run_cli, monkeypatch):
    # The manifest's key is checked against the input files' bytes before anything is parsed: an
    # unchanged rebuild never reads an abstract, yet gives the warnings the build gave.
    src = tmp_path / "in.jsonl"
    rows = [{"abstract": "Graph neural networks pass messages along the edges of molecules."},
            {"abstract": "Graph neural networks pass messages along the edges of molecules!"},  # merged: a warning
            {"abstract": "Protein folding is predicted with transformers from amino acid sequences."},
            {"abstract": "..."}]  # no noun phrase: a warning of the build itself
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    first = kg.build([src], out, embedder=hash_embedder, nlp=nlp, entities=False)
    assert {w.reason for w in first.warnings} == {"duplicate_merged", "no_concepts"}, first.warnings
    def no_reading(*a, **k):
        raise AssertionError("an unchanged rebuild parsed the abstracts")

    monkeypatch.setattr("kg.text.sources.read_papers", no_reading)
    monkeypatch.setattr("kg.pipeline.stages.read_papers", no_reading)
    again = kg.build([src], out, embedder=hash_embedder, nlp=nlp, entities=False)
    assert again.unchanged and again.warnings == first.warnings
    assert again.extraction == {"computed": 0, "from_cache": first.stats["papers"]}
    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: real(*a, **k, embedder=hash_embedder, nlp=nlp))
    shown = run_cli("build", str(src), "--out", str(out), "--no-entities")
    assert shown.code == 0 and "nothing changed since the last build" in shown.out, shown.err
    assert [line for line in shown.err.splitlines() if line.startswith("warning:")] == [
        f"warning: {w}" for w in first.warnings], shown.err
    monkeypatch.undo()
    src.write_text(src.read_text() + json.dumps({"abstract": "Diffusion models generate images from noise."}) + "\n")
    assert not kg.build([src], out, embedder=hash_embedder, nlp=nlp, entities=False).unchanged


def test_a_rebuild_parses_only_the_files_that_changed_and_gives_a_clean_builds_warnings_and_outputs(
        tmp_path, hash_embedder, nlp, run_cli, monkeypatch):
    # A file added: the one read before is not parsed again (its reading is in <out>/.cache/read/,
    # kg.text.readcache), yet its warnings (a merged duplicate row, a skipped row) are printed as a
    # clean build prints them, and the outputs are a clean build's, byte for byte.
    import kg.text.sources

    src = tmp_path / "src"
    src.mkdir()
    rows = [{"abstract": "Graph neural networks pass messages along the edges of molecules."},
            {"abstract": "Graph neural networks pass messages along the edges of molecules!"},  # merged: a warning
            {"title": "a row without an abstract"},  # skipped: a warning
            {"abstract": "Protein folding is predicted with transformers from amino acid sequences."}]
    (src / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, clean_out = tmp_path / "out", tmp_path / "clean"
    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: real(*a, **k, embedder=hash_embedder, nlp=nlp))
    assert run_cli("build", str(src), "--out", str(out), "--no-entities").code == 0
    assert len(list((out / ".cache" / "read").iterdir())) == 1
    (src / "b.jsonl").write_text(json.dumps({"abstract": "Diffusion models generate images from noise."}) + "\n")
    parse, parsed = kg.text.sources._parse, []
    monkeypatch.setattr(kg.text.sources, "_parse", lambda data, name, suffix: parsed.append(name) or parse(data, name, suffix))
    shown = run_cli("build", str(src), "--out", str(out), "--no-entities")
    assert shown.code == 0 and parsed == ["src/b.jsonl"], (parsed, shown.err)
    clean = real([src], clean_out, embedder=hash_embedder, nlp=nlp, entities=False, cache=False)
    assert not (clean_out / ".cache" / "read").exists()  # cache=False: nothing read from it, nothing written
    assert {"duplicate_merged", "row_without_abstract"} <= {w.reason for w in clean.warnings}
    assert [line for line in shown.err.splitlines() if line.startswith("warning:")] == [
        f"warning: {w}" for w in clean.warnings], shown.err
    for name in ("graph.nt", "graph.ttl", "keyphrases.jsonl", "graph.json", "stats.json", "map.json"):
        assert (out / name).read_bytes() == (clean_out / name).read_bytes(), name
    assert len(list((out / ".cache" / "read").iterdir())) == 2
    (src / "a.jsonl").unlink()
    assert run_cli("build", str(src), "--out", str(out), "--no-entities").code == 0
    assert len(list((out / ".cache" / "read").iterdir())) == 1  # a.jsonl's entry dropped with it


def test_a_rebuild_embeds_only_the_labels_it_has_not_embedded_before(tmp_path, hash_embedder, nlp, monkeypatch):
    # The merge compares near-duplicate labels by their embeddings, kept in the extraction cache:
    # a rebuild embeds only new labels, and its outputs are a clean build's.
    import shutil
    from pathlib import Path

    from kg.pipeline import stages

    embedded: list[str] = []

    class Labels:  # the model as the merge sees it: each label it embeds recorded
        def embed(self, texts):
            embedded.extend(texts)
            return hash_embedder.embed(texts)

    real = stages.label_embedder
    monkeypatch.setattr(stages, "label_embedder", lambda embedder, precision, **kw: real(Labels(), precision, **kw))
    src = tmp_path / "src"
    shutil.copytree(Path(__file__).resolve().parent.parent / "seeds", src)
    out = tmp_path / "out"
    kg.build([src], out, embedder=hash_embedder, nlp=nlp, store=False)
    first = list(embedded)
    assert first, "the seeds have near-duplicate labels to compare"
    (src / "more.txt").write_text("ICLR 2026\n\nLarge language models (LLMs) answer questions with retrieval.\n")
    embedded.clear()
    again = kg.build([src], out, embedder=hash_embedder, nlp=nlp, store=False)
    assert not set(embedded) & set(first) and len(embedded) < len(first)  # none embedded twice
    monkeypatch.undo()
    clean = kg.build([src], tmp_path / "clean", embedder=hash_embedder, nlp=nlp, store=False, cache=False)
    for name in ("graph.nt", "graph.json", "stats.json", "keyphrases.jsonl"):
        assert (again.out / name).read_bytes() == (clean.out / name).read_bytes(), name


def test_files_written_one_at_a_time_are_the_bytes_of_the_in_memory_renderers(tmp_path, hash_embedder, nlp):
    # kg build streams each output to its file (no two held in memory); the in-memory API
    # (kg.rdf.rdf_files, kg.pipeline.render_outputs) must give the same bytes.
    from kg.pipeline import render_outputs
    from kg.rdf.write import rdf_files

    result = kg.build([abstracts(tmp_path, 6)], tmp_path / "out", embedder=hash_embedder, nlp=nlp)
    written = {p.name: p.read_bytes() for p in result.files}
    base = result.graph.graph["base_iri"]
    for name, data in rdf_files(result.graph, base=base).items():
        assert written[name] == data, name
    records = [json.loads(line) for line in written["keyphrases.jsonl"].decode("utf-8").splitlines()]
    entities = [json.loads(line) for line in written["entities.jsonl"].decode("utf-8").splitlines()]
    rendered = render_outputs(result.graph, records=records, stats=result.stats, base=base, entities=entities)
    assert rendered == written
    manifest = json.loads((tmp_path / "out" / ".cache" / "manifest.json").read_text())
    assert {n: o["sha256"] for n, o in manifest["outputs"].items()} == {n: hashlib.sha256(d).hexdigest() for n, d in written.items()}


def test_a_failed_fork_writes_the_outputs_in_the_process(tmp_path, hash_embedder, nlp, monkeypatch):
    # Where no second process can be started, the build writes every output itself: the same bytes.
    import multiprocessing.process

    a = kg.build([abstracts(tmp_path)], tmp_path / "a", embedder=hash_embedder, nlp=nlp)

    def no_fork(self):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", no_fork)
    b = kg.build([abstracts(tmp_path)], tmp_path / "b", embedder=hash_embedder, nlp=nlp)
    for name in ("graph.nt", "graph.html", "graph.json", "keyphrases.jsonl", "stats.json"):
        assert (a.out / name).read_bytes() == (b.out / name).read_bytes(), name



# ---------------------------------------------------------------------------- the store of a rebuild


def _store_triples(folder):
    """The triples of the store Oxigraph keeps in *folder*, as sorted N-Quads lines."""
    import pyoxigraph as ox

    store = ox.Store.read_only(str(folder / "data"))
    return sorted(ox.serialize(store.quads_for_pattern(None, None, None), format=ox.RdfFormat.N_QUADS).splitlines())


def _clean_load(nt, where):
    """The triples of a store that *nt* is loaded into whole, as `_store_triples` gives them."""
    import pyoxigraph as ox

    where.mkdir()
    store = ox.Store(str(where / "data"))
    store.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
    del store
    return _store_triples(where)


def _two_builds(tmp_path, hash_embedder, nlp):
    """A build of the seeds with its store in out/, and the graph.nt of the seeds and two more
    abstracts in next/ (about 6 % of its lines are new or changed)."""
    import shutil
    from pathlib import Path

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).resolve().parent.parent / "seeds", src)
    out = tmp_path / "out"
    kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    (src / "more.txt").write_text("ICLR 2026\n\nSparse autoencoders find features in language models.\n\n"
                                  "Graph neural networks pass messages along the bonds of molecules.\n")
    kg.build([src], tmp_path / "next", embedder=hash_embedder, nlp=nlp, store=False)
    return src, out, tmp_path / "next" / "graph.nt"


def test_a_store_up_to_date_with_the_previous_graph_is_updated_to_what_a_clean_load_holds(tmp_path, hash_embedder, nlp):
    # The store of a rebuild is the previous one (copied) with the triples of the lines that
    # changed removed and added, made in a second process, when the previous one is up to date.
    import shutil

    from kg.sparql.store import StoreLoad

    src, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    previous = _store_triples(out / "store")
    load = StoreLoad(out, nt)
    load.wait()
    assert load.how == "updated"
    shutil.copyfile(nt, out / "graph.nt")  # as the build's commit does
    info = load.finish()
    assert info.reloaded and info.triples == len(nt.read_bytes().splitlines())
    assert _store_triples(out / "store") == _clean_load(nt, tmp_path / "clean") != previous
    assert not list(out.glob(".store-*"))
    # kg build itself: the same store as a clean load of the new graph.nt
    (src / "more.txt").write_text("ICLR 2026\n\nDiffusion models generate images from noise.\n")
    kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert _store_triples(out / "store") == _clean_load(out / "graph.nt", tmp_path / "clean-2")
    # a store that is not up to date with graph.nt is loaded whole
    (out / "graph.nt").touch()
    load = StoreLoad(out, nt)
    load.wait()
    assert load.how == "loaded"
    load.discard()
    assert not list(out.glob(".store-*"))


def _written_slowly(source, target, pieces=7):
    """A thread that writes the bytes of *source* to *target* in *pieces*, cut anywhere (mid-line
    too), a little apart, as kg build writes graph.nt while the store follows it."""
    import threading
    import time

    data = source.read_bytes()
    cuts = [len(data) * i // pieces for i in range(pieces + 1)]

    def write():
        with target.open("ab") as f:
            for a, b in zip(cuts, cuts[1:]):
                f.write(data[a:b])
                f.flush()
                time.sleep(0.05)

    return threading.Thread(target=write)


def test_a_file_followed_while_written_is_read_whole_in_whole_lines(tmp_path):
    from kg.sparql import loading as serve

    source = tmp_path / "a.nt"
    source.write_bytes(b"".join(b'<urn:s%d> <urn:p> "%d" .\n' % (i, i) for i in range(5000)) + b"<urn:last> <urn:p> <urn:o> .")
    target = tmp_path / "b.nt"
    target.write_bytes(b"")
    writer = _written_slowly(source, target)
    writer.start()
    pieces = list(serve._follow(target, lambda timeout: not writer.is_alive()))
    writer.join()
    assert b"".join(pieces) == source.read_bytes()
    assert all(piece.endswith(b"\n") for piece in pieces[:-1]) and pieces[-1] == b"<urn:last> <urn:p> <urn:o> ."
    assert serve._statement_lines(b"".join(pieces)) == serve.count_statements(source) == 5001


@pytest.mark.parametrize("previous, process", [(True, True), (False, True), (True, False)])
def test_a_store_made_from_graph_nt_as_it_is_written_is_what_a_clean_load_holds(tmp_path, hash_embedder, nlp, monkeypatch,
                                                                                previous, process):
    # kg build starts the store when it opens graph.nt: the process follows the file as it grows
    # (updating the previous store, or loading it whole) and finishes once told it is whole;
    # where no process can start, a thread of this one loads it whole once it is whole.
    import shutil
    import subprocess

    from kg.sparql import store as serve
    from kg.sparql.store import StoreLoad

    src, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    if not previous:
        shutil.rmtree(out / "store")
    if not process:
        version = serve._oxigraph_version(serve.oxigraph_binary())
        monkeypatch.setattr(serve, "_oxigraph_version", lambda exe: version)
        monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: (_ for _ in ()).throw(BlockingIOError(11, "no process")))
    growing = tmp_path / "growing.nt"
    growing.write_bytes(b"")
    load = StoreLoad(out, growing, follow=True)
    writer = _written_slowly(nt, growing)
    writer.start()
    writer.join()
    with pytest.raises(RuntimeError):  # not told the file is whole: waiting would be for ever
        load.wait()
    load.written()
    load.ready()
    assert load.how == ("updated" if previous and process else "loaded")
    shutil.copyfile(nt, out / "graph.nt")  # as the build's commit does
    info = load.finish()
    assert info.triples == len(nt.read_bytes().splitlines())
    assert _store_triples(out / "store") == _clean_load(nt, tmp_path / "clean")
    assert not list(out.glob(".store-*"))


def test_a_store_following_a_build_that_stopped_is_dropped(tmp_path, hash_embedder, nlp):
    from kg.sparql.store import StoreLoad

    _, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    before = _store_triples(out / "store")
    growing = tmp_path / "growing.nt"
    growing.write_bytes(nt.read_bytes()[:1000])
    load = StoreLoad(out, growing, follow=True)
    load.discard()  # the build failed while writing graph.nt
    assert not list(out.glob(".store-*")) and _store_triples(out / "store") == before


def test_a_store_update_gives_way_to_a_whole_load_when_much_changed(tmp_path, hash_embedder, nlp, monkeypatch):
    from kg.sparql import loading as serve

    _, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    old, new = (set(path.read_bytes().splitlines()) for path in (out / "graph.nt", nt))
    lines = len(nt.read_bytes().splitlines())
    share = len(old ^ new) / lines
    assert 0 < share < serve._MAX_CHANGED
    monkeypatch.setattr(serve, "_MAX_CHANGED", share * 0.99)
    (tmp_path / "a").mkdir()
    assert serve._update_in_process(tmp_path / "a", nt=nt, previous=out / "store" / "data", previous_nt=out / "graph.nt") is None
    assert list((tmp_path / "a").iterdir()) == []
    monkeypatch.setattr(serve, "_MAX_CHANGED", share)
    (tmp_path / "b").mkdir()
    assert serve._update_in_process(tmp_path / "b", nt=nt, previous=out / "store" / "data", previous_nt=out / "graph.nt") == lines
    assert _store_triples(tmp_path / "b") == _clean_load(nt, tmp_path / "clean")


@pytest.mark.parametrize("follow", [False, True])
def test_a_damaged_previous_store_is_not_updated_but_loaded_whole(tmp_path, hash_embedder, nlp, follow):
    from kg.sparql.store import StoreLoad

    def made(nt):
        load = StoreLoad(out, nt, follow=follow)
        if follow:
            load.written()
        load.ready()
        return load

    _, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    tables = sorted((out / "store" / "data").glob("*.sst"))
    assert tables
    tables[-1].write_bytes(b"damaged")
    load = made(nt)
    assert load.how == "loaded"
    load.discard()
    for table in tables:
        table.unlink()
    load = made(nt)
    assert load.how == "loaded"
    load.discard()
    assert not list(out.glob(".store-*"))


@pytest.mark.parametrize("how, error", [
    ("import os; os._exit(4)", r"the process making the store stopped \(exit code 4\); the previous outputs are unchanged"),
    ("import sys; sys.stderr.write('x.nt: oxigraph could not update the store from it (disk full)\\n'); sys.exit(5)",
     r"^x\.nt: oxigraph could not update the store from it \(disk full\)$"),
])
def test_a_failed_store_update_is_an_output_error_and_leaves_the_previous_outputs_and_store_whole(
        tmp_path, hash_embedder, nlp, monkeypatch, how, error):
    import sys

    from kg.sparql import store as serve

    out = tmp_path / "out"
    kg.build([abstracts(tmp_path, 4)], out, embedder=hash_embedder, nlp=nlp)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    store_before = _store_triples(out / "store")
    monkeypatch.setattr(serve, "store_command", lambda *args, **kwargs: [sys.executable, "-c", how])
    with pytest.raises(OutputError, match=error):
        kg.build([abstracts(tmp_path, 5)], out, embedder=hash_embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # no temporary file either
    assert _store_triples(out / "store") == store_before
    assert not list(out.glob(".store-*"))


def test_an_update_removes_and_adds_the_lines_of_one_file_only(tmp_path):
    import pyoxigraph as ox

    from kg.sparql.loading import _update_in_process, load_in_process

    old, new = tmp_path / "old.nt", tmp_path / "new.nt"
    same = b"".join(b"<a:s> <a:p> <a:o%d> .\n" % i for i in range(20))  # unchanged: the update is worth making
    old.write_bytes(b'<a:a> <a:p> <a:b> .\n<a:a> <a:p> <a:c> .\n' + same + b'<a:d> <a:p> "x" .\n')
    new.write_bytes(b'<a:a> <a:p> <a:c> .\n<a:e> <a:p> <a:f> .\n' + same + b'<a:d> <a:p> "x" .\n<a:d> <a:p> "y" .\n')
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    assert load_in_process(tmp_path / "old", nt=old) == 23
    assert _update_in_process(tmp_path / "new", nt=new, previous=tmp_path / "old" / "data", previous_nt=old) == 24
    got = {str(q.subject) + str(q.object) for q in ox.Store.read_only(str(tmp_path / "new" / "data"))}
    assert got == {"<a:a><a:c>", "<a:e><a:f>", '<a:d>"x"', '<a:d>"y"'} | {f"<a:s><a:o{i}>" for i in range(20)}


def test_where_no_process_can_be_started_the_store_is_loaded_in_the_build_process(tmp_path, hash_embedder, nlp, monkeypatch):
    from kg.sparql import store as serve
    from kg.sparql.store import StoreLoad

    _, out, nt = _two_builds(tmp_path, hash_embedder, nlp)
    monkeypatch.setattr(serve, "store_command", lambda *args, **kwargs: [str(tmp_path / "no-such-program")])
    load = StoreLoad(out, nt)
    load.ready()
    assert load.how == "loaded"
    load.discard()
    kg.build([abstracts(tmp_path, 3)], out, embedder=hash_embedder, nlp=nlp)
    assert _store_triples(out / "store") == _clean_load(out / "graph.nt", tmp_path / "clean")


def test_the_store_process_imports_the_kg_this_process_runs(tmp_path):
    import subprocess
    import sys

    from kg.scale.executor import same_kg_env

    run = subprocess.run([sys.executable, "-c", "import kg; print(kg.__file__)"], cwd=tmp_path, env=same_kg_env(),
                         capture_output=True, text=True, check=True)
    assert run.stdout.strip() == kg.__file__


def test_the_papers_are_dropped_before_the_map_is_made(tmp_path, hash_embedder, nlp, monkeypatch):
    """keyphrases.jsonl and entities.jsonl are written first, and then the map and every later stage
    read the graph alone: the papers, their keyphrases and entities are no longer held (the build's
    peak at scale)."""
    import gc

    import kg.pipeline.stages
    from kg.extract.entities import PaperEntities
    from kg.extract.keyphrases import PaperKeyphrases
    from kg.text.sources import Paper, read_papers

    f = tmp_path / "in.txt"
    f.write_text("ICML 2026 Papers\n\n" + "\n\n".join(
        f"Paper {i} studies neighbourhood sampling for graph neural networks and message passing, case {i}." for i in range(4)))
    ids = {p.id for p in read_papers([f]).papers}
    seen = {}
    concept_map = kg.pipeline.stages.concept_map  # the map's first step

    def watched(G):
        gc.collect()
        seen["alive"] = [o for o in gc.get_objects() if type(o) is Paper and o.id in ids  # (type: no isinstance
                         or type(o) is PaperKeyphrases and o.paper_id in ids  # hook of other libraries' objects runs)
                         or type(o) is PaperEntities]
        seen["staged"] = sorted(p.name.split(".")[1] for p in (tmp_path / "out").glob(".*.tmp"))
        return concept_map(G)

    monkeypatch.setattr(kg.pipeline.stages, "concept_map", watched)
    result = kg.build([f], tmp_path / "out", embedder=hash_embedder, nlp=nlp)
    assert len(ids) == 4 and {json.loads(line)["id"] for line in (result.out / "keyphrases.jsonl").open()} == ids
    assert seen["alive"] == []
    assert seen["staged"] == ["entities", "keyphrases"]


def test_the_concept_map_is_not_held_while_the_rdf_is_written(tmp_path, hash_embedder, nlp, monkeypatch):
    """Once the views writer has forked (it lays the map out from the concept map), the build process
    drops its concept map: the RDF, written beside, never reads it (its arrays grow with the map's links)."""
    import gc

    import kg.rdf.write
    from kg.graph.cooccurrence import ConceptMap

    f = tmp_path / "in.txt"
    f.write_text("ICML 2026 Papers\n\n" + "\n\n".join(
        f"Paper {i} studies neighbourhood sampling for graph neural networks and message passing, case {i}." for i in range(4)))
    seen = {}
    write_rdf = kg.rdf.write.write_rdf

    def watched(G, *args, **kwargs):
        gc.collect()
        seen["maps"] = sum(type(o) is ConceptMap for o in gc.get_objects())
        return write_rdf(G, *args, **kwargs)

    monkeypatch.setattr(kg.rdf.write, "write_rdf", watched)
    kg.build([f], tmp_path / "out", embedder=hash_embedder, nlp=nlp, entities=False)
    assert seen["maps"] == 0
    items = json.loads((tmp_path / "out" / "map.json").read_text())["network"]["items"]
    assert any("x" in item for item in items)  # the views writer had it, and laid the map out


def test_the_authors_keywords_reach_graph_json_the_rdf_and_keyphrases_jsonl(tmp_path, hash_embedder, nlp):
    """A paper's keywords (a list, or one text split at ``;``) are its node's ``keywords``, its
    ``schema:keywords`` literals and its keyphrases.jsonl ``keywords``, in input order; a paper
    without any has none of them; the RDF still conforms to the shapes."""
    from rdflib import Graph, Literal, Namespace

    from kg.rdf.validate import validate_graph

    rows = [{"id": "a", "abstract": "Graph neural networks pass messages between the atoms of molecules to predict properties.",
             "keywords": ["graph neural networks", "message passing", "Graph Neural Networks"]},
            {"id": "b", "abstract": "Message passing on molecular graphs predicts the solubility of small molecules well.",
             "keywords": "molecules; solubility"},
            {"id": "c", "abstract": "Transformers read molecule strings and predict their properties without any graph."}]
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    kg.build([f], out, embedder=hash_embedder, nlp=nlp)
    expected = {"a": ["graph neural networks", "message passing"], "b": ["molecules", "solubility"]}
    papers = {d["source_id"]: d for d in json.loads((out / "graph.json").read_text(encoding="utf-8"))["nodes"]
              if d["kind"] == "paper"}
    assert {sid: d.get("keywords") for sid, d in papers.items()} == {**expected, "c": None}
    assert "keywords" not in papers["c"]
    records = {r["source_id"]: r for r in map(json.loads, (out / "keyphrases.jsonl").read_text(encoding="utf-8").splitlines())}
    assert list(records["a"]) == ["id", "source_id", "label", "venue", "year", "sources", "keywords", "keyphrases"]
    assert list(records["c"]) == ["id", "source_id", "label", "venue", "year", "sources", "keyphrases"]
    assert {sid: r.get("keywords") for sid, r in records.items()} == {**expected, "c": None}
    g, sdo = Graph().parse(out / "graph.nt", format="nt"), Namespace("https://schema.org/")
    iri = {sid: next(g.subjects(sdo.identifier, Literal(d["id"].partition(":")[2]))) for sid, d in papers.items()}
    assert {sid: set(g.objects(s, sdo.keywords)) for sid, s in iri.items()} == {
        "a": {Literal(k) for k in expected["a"]}, "b": {Literal(k) for k in expected["b"]}, "c": set()}
    found = validate_graph(out / "graph.nt")
    assert found.conforms, found.report
