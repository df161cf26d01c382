"""The command line: help, README coverage, errors as one line with their exit code."""


import pytest

COMMANDS = ["build", "query", "stats", "queries", "serve", "validate", "eval"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_answers_help(run_cli, command):
    """(tests/test_docs.py checks that docs/cli.md documents each command and option.)"""
    result = run_cli(command, "--help")
    assert result.code == 0 and "Usage: kg " + command in result.out


def test_help_is_instant_without_heavy_imports():
    import subprocess
    import sys

    code = "import sys, kg.cli; heavy = {'torch', 'sentence_transformers', 'spacy', 'pyvis', 'keybert', 'rdflib'} & set(sys.modules); print(sorted(heavy))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_build_option_defaults_are_the_extraction_defaults():
    """The CLI repeats two defaults of kg.extract.Settings (so that `kg --help` imports nothing
    heavy); they must not drift apart."""
    from kg.cli import cli
    from kg.extract.keyphrases import Settings

    params = {p.name: p.default for p in cli.commands["build"].params}
    assert (params["top_n"], params["diversity"], params["precision"]) == (Settings().top_n, Settings().diversity, Settings().precision)


def test_python_dash_m_kg_works():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "kg", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "build" in result.stdout


def test_build_of_a_missing_path_is_one_line_and_exit_2(run_cli, tmp_path):
    result = run_cli("build", str(tmp_path / "missing"), "--out", str(tmp_path / "out"))
    assert result.code == 2
    assert result.err == f"error: {tmp_path / 'missing'}: no such file or folder; give abstract-list files or folders of them\n"
    assert not (tmp_path / "out").exists()


def test_build_of_an_empty_file(run_cli, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    result = run_cli("build", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "out"))
    assert result.code == 2 and result.err.startswith("error: ") and "empty.txt: empty file; put a header line" in result.err


def test_bad_base_iri(run_cli, tmp_path):
    (tmp_path / "a.txt").write_text("ICML 2026\n\nGraph neural networks for molecules.\n")
    result = run_cli("build", str(tmp_path / "a.txt"), "--out", str(tmp_path / "o"), "--base", "not an iri")
    assert result.code == 1 and result.err == ("error: base IRI 'not an iri' is not an absolute http(s) IRI ending in '/' or '#'"
                                              " (Invalid IRI code point ' '); give one such as https://example.org/kg/\n")


@pytest.mark.parametrize("base", ["http://ex.org/a%zz/", "http://[::1/", "http://ex.org/\x00/", "http://ex.org/\n/", "http:///kg/",
                                  "http://ex.org:port/", "http://ex.org/%/", "ftp://ex.org/", "http://ex.org/kg"])
def test_a_base_iri_that_is_no_iri_is_one_line_before_any_work(run_cli, tmp_path, base):
    result = run_cli("build", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "o"), "--base", base)
    assert result.code == 1 and result.err.count("\n") == 1 and result.err.startswith("error: base IRI "), result.err
    assert "is not an absolute http(s) IRI ending in '/' or '#'" in result.err and not (tmp_path / "o").exists()


def test_warnings_and_errors_about_a_file_named_with_a_newline_are_one_line_each(run_cli, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "two\nlines.txt").write_text("Graph neural networks pass messages along the edges of a graph.\n")
    result = run_cli("build", str(folder), "--out", str(tmp_path / "out"), "-q")
    assert result.code == 0, result.err
    assert result.err == "warning: in/two\\nlines.txt, line 1: no header line; its papers are kept with venue and year unknown" \
        " (start the file with a line such as 'ICML 2026 Papers')\n", result.err
    (folder / "two\nlines.txt").write_text("")
    failed = run_cli("build", str(folder), "--out", str(tmp_path / "out"), "-q")
    assert failed.code == 2 and failed.err.count("\n") == 1 and "two\\nlines.txt: empty file" in failed.err, failed.err


@pytest.mark.parametrize("args, code, said", [
    (["--diversity", "nan"], 1, "error: diversity nan: give a number from 0 (none) to 1 (most)\n"),
    (["--executor", "dask-local:\u00b2"], 2, "the number of workers must be a whole number from 1 to 1024"),
    (["--executor", "dask-local:" + "9" * 30], 2, "the number of workers must be a whole number from 1 to 1024"),
])
def test_build_option_values_that_are_no_values_are_one_line(run_cli, tmp_path, args, code, said):
    (tmp_path / "a.txt").write_text("ICML 2026\n\nGraph neural networks for molecules.\n")
    result = run_cli("build", str(tmp_path / "a.txt"), "--out", str(tmp_path / "o"), *args)
    assert result.code == code and said in result.err and "Traceback" not in result.err, result.err
    assert not (tmp_path / "o").exists()


def test_the_cli_counts_every_warning_of_a_kind_it_did_not_keep(run_cli, tmp_path, monkeypatch, hash_embedder, nlp):
    import json

    import kg.text.files

    monkeypatch.setattr(kg.text.files, "MAX_KEPT_WARNINGS", 20)
    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: real(*a, **k, embedder=hash_embedder, nlp=nlp))
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"abstract": "Graph neural networks pass messages along edges."}) + "\n" + "{}\n" * 500)
    result = run_cli("build", str(f), "--out", str(tmp_path / "out"), "-q")
    assert result.code == 0, result.err
    assert result.err.splitlines()[-1] == "warning: … and 490 more of this kind (row_without_abstract); stats.json counts them all"
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["input"]["warnings"] == {"row_without_abstract": 500} and stats["input"]["skipped"] == {"row_without_abstract": 500}


def test_a_doi_on_two_abstracts_is_on_stderr_and_in_stats_json(run_cli, tmp_path, monkeypatch, hash_embedder, nlp):
    import json

    import kg

    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: real(*a, **k, embedder=hash_embedder, nlp=nlp))
    rows = [{"abstract": "Graph neural networks pass messages along edges of molecules.", "doi": "10.5555/x.1"},
            {"abstract": "Protein folding is predicted with transformers from sequences.", "doi": "https://doi.org/10.5555/X.1"}]
    f = tmp_path / "x.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_cli("build", str(f), "--out", str(tmp_path / "out"), "-q")
    assert result.code == 0, result.err
    assert "DOI 10.5555/x.1 is also that of x.jsonl, row 1" in result.err
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["papers"] == 2 and stats["input"]["identifier_conflicts_count"] == 1
    (conflict,) = stats["input"]["identifier_conflicts"]
    assert conflict["identifier"] == "doi:10.5555/x.1" and conflict["sources"] == ["x.jsonl, row 1", "x.jsonl, row 2"]


def test_query_errors(run_cli, project, tmp_path):
    graph = tmp_path / "g.ttl"
    graph.write_text("@prefix s: <https://schema.org/> . <http://x/p> a s:ScholarlyArticle ; s:name \"P\" .\n")
    unknown = run_cli("query", "no-such-query", "--graph", str(graph))
    assert unknown.code == 4 and unknown.err.startswith("error: no query named 'no-such-query'; known queries: ")
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT ?x WHERE { ?x ")
    parsed = run_cli("query", str(bad), "--graph", str(graph))
    assert parsed.code == 4 and parsed.err.startswith("error: the query does not parse: ")
    missing = run_cli("query", "top-concepts", "--graph", str(tmp_path / "none.ttl"))
    assert missing.code == 2 and "none.ttl: no such graph file; run `kg build` first or pass --graph" in missing.err
    binding = run_cli("query", "top-concepts", "--graph", str(graph), "--bind", "no equals sign")
    assert binding.code == 4 and "write NAME=VALUE" in binding.err


def test_a_table_shows_control_characters_of_the_data_escaped(run_cli, project, tmp_path):
    """A label holding a terminal escape sequence is printed escaped in the table (for people),
    as it is in CSV and JSON (for programs)."""
    graph = tmp_path / "g.ttl"
    graph.write_text('<http://x/p> <http://x/name> "red \\u001B[31m text" .\n')
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?name WHERE { ?p <http://x/name> ?name }")
    table = run_cli("query", str(query), "--graph", str(graph))
    assert table.code == 0 and "red \\x1b[31m text" in table.out and "\x1b" not in table.out, table.out
    csv = run_cli("query", str(query), "--graph", str(graph), "--format", "csv")
    assert "red \x1b[31m text" in csv.out


def test_query_formats(run_cli, project, tmp_path):
    graph = tmp_path / "g.ttl"
    graph.write_text('<http://x/a> <http://x/name> "A, \\"quoted\\"" .\n<http://x/b> <http://x/name> "B" .\n')
    q = tmp_path / "names.rq"
    q.write_text("# names\nSELECT ?s ?name WHERE { ?s <http://x/name> ?name } ORDER BY ?name")
    table = run_cli("query", str(q), "--graph", str(graph))
    # For people: the label stands for the IRIs, said once above the columns.
    assert table.out.splitlines()[0].startswith("IRIs of s hidden") and table.out.rstrip().endswith("(2 rows)")
    assert table.out.splitlines()[1].split() == ["name"] and "http://x/a" not in table.out
    # For programs: every column, full IRIs.
    tsv = run_cli("query", str(q), "--graph", str(graph), "--format", "tsv")
    assert tsv.out == 's\tname\nhttp://x/a\tA, "quoted"\nhttp://x/b\tB\n'
    csv_out = run_cli("query", str(q), "--graph", str(graph), "--format", "csv")
    assert csv_out.out == 's,name\nhttp://x/a,"A, ""quoted"""\nhttp://x/b,B\n'
    js = run_cli("query", str(q), "--graph", str(graph), "--format", "json", "--bind", "name=B")
    import json

    assert json.loads(js.out) == {"head": {"vars": ["s", "name"]},
                                  "results": {"bindings": [{"s": {"type": "uri", "value": "http://x/b"}, "name": {"type": "literal", "value": "B"}}]}}


def test_stats_of_a_missing_graph(run_cli, tmp_path):
    result = run_cli("stats", "--graph", str(tmp_path / "graph.json"))
    assert result.code == 2 and "graph.json: no such file; run `kg build` first" in result.err


@pytest.mark.model
def test_stats_prints_figures_and_top_concepts(run_cli, seeds_build):
    result = run_cli("stats", "--graph", str(seeds_build.out))
    assert result.code == 0
    assert "papers: 38" in result.out and "top concepts:" in result.out
    assert len(result.out.split("top concepts:")[1].strip().splitlines()) == 10


def test_query_reads_the_persistent_store_and_falls_back_to_the_file(tmp_path, hash_embedder, nlp, project, run_cli):
    import kg
    from kg.sparql.engine import persistent_store

    src = tmp_path / "a.txt"
    src.write_text("ICML 2026\n\nGraph neural networks pass messages.\n\nGraph neural networks for molecules.\n")
    out = tmp_path / "out"
    kg.build([src], out, embedder=hash_embedder, nlp=nlp)
    assert persistent_store(out / "graph.ttl") is not None
    via_store = run_cli("query", "top-concepts", "--graph", str(out / "graph.ttl"), "--format", "csv")
    (out / "store" / "source.json").unlink()  # a stale or missing store: the file is parsed instead
    assert persistent_store(out / "graph.ttl") is None
    via_file = run_cli("query", "top-concepts", "--graph", str(out / "graph.ttl"), "--format", "csv")
    assert via_store.code == via_file.code == 0 and via_store.out == via_file.out and "graph neural network" in via_store.out


def test_query_pages(run_cli, project, tmp_path):
    """A paged canned query answers a page (limit, offset) and says on stderr how to get the next."""
    from fixture_graph import fixture_graph

    from kg.rdf.statements import to_rdf
    from kg.rdf.write import serialize

    graph = tmp_path / "graph.ttl"
    graph.write_text(serialize(to_rdf(fixture_graph()), "turtle"), encoding="utf-8")
    args = ("query", "papers-of-concept", "--graph", str(graph), "--bind", "label=optimization", "--format", "csv")
    every = run_cli(*args, "--bind", "limit=0")
    assert every.code == 0 and len(every.out.splitlines()) == 6 and every.err == ""  # 5 rows and the header
    page = run_cli(*args, "--bind", "limit=2", "--bind", "offset=1")
    assert page.out.splitlines() == every.out.splitlines()[:1] + every.out.splitlines()[2:4]
    assert page.err == "a page of 2 rows; the next: --bind offset=3, all of them: --bind limit=0\n"
    last = run_cli(*args, "--bind", "limit=2", "--bind", "offset=4")
    assert last.out.splitlines()[1:] == every.out.splitlines()[5:] and last.err == ""
    bad = run_cli(*args, "--bind", "limit=-2")
    assert bad.code == 4 and bad.err == "error: --bind limit=-2: give a whole number >= 0 as the limit (the rows a page; 0 gives every row)\n"


def test_build_skips_a_link_in_a_folder_unless_follow_links(run_cli, tmp_path, monkeypatch, hash_embedder, nlp):
    import os

    import kg

    outside = tmp_path / "outside.txt"
    outside.write_text("ICML 2026\n\nGraph neural networks pass messages along the edges of a secret graph.\n")
    (tmp_path / "in").mkdir()
    os.symlink(outside, tmp_path / "in" / "leak.txt")
    refused = run_cli("build", str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    assert refused.code == 2 and "leak.txt (a link)" in refused.err and "pass --follow-links" in refused.err, refused.err
    assert "Traceback" not in refused.err and not (tmp_path / "out").exists()
    real = kg.build
    monkeypatch.setattr(kg, "build", lambda *a, **k: real(*a, **k, embedder=hash_embedder, nlp=nlp))
    followed = run_cli("build", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--follow-links", "-q")
    assert followed.code == 0, followed.err
    assert "secret graph" in (tmp_path / "out" / "keyphrases.jsonl").read_text()



@pytest.mark.parametrize("args, said", [
    (["--graph", "g.ttl", "--bind", "text=\udcff"], "--bind text: the value holds byte 0xff, which is not UTF-8"),
    (["--endpoint", "http://127.0.0.1:9/\udcff", "--bind", "text=x"], "--endpoint holds byte 0xff"),
    (["--endpoint", "http://127.0.0.1:9/q", "--default-graph", "http://e.org/\udcff", "--bind", "text=x"],
     "--default-graph holds byte 0xff"),
])
def test_an_argument_that_is_not_utf8_is_one_line_and_exit_4(run_cli, project, args, said):
    """``kg query --bind text=$'\\xff'`` (issue 43) exited 1 with a traceback, and so did a
    --default-graph: Python holds the byte as a lone surrogate. Now a --bind value (or endpoint,
    or graph IRI) kg cannot take: exit 4 (docs/cli.md), one line naming it."""
    (project / "g.ttl").write_text('<http://e.org/s> <http://e.org/p> "x" .\n', encoding="utf-8")
    result = run_cli("query", "search", *args)
    assert result.code == 4 and result.err.count("\n") == 1 and said in result.err, result
    assert "Traceback" not in result.err


@pytest.mark.model
def test_every_canned_query_fits_120_columns_on_the_seeds(run_cli, seeds_build, monkeypatch):
    """Issue 50: `kg query`'s table, not on a terminal, is at most 120 columns wide for every
    canned query with the bindings of its header's first example, on the seeds' build."""
    import shlex

    from kg.sparql.catalogue import catalogue, example_lines

    monkeypatch.delenv("COLUMNS", raising=False)
    for name, q in catalogue().items():
        args = shlex.split(example_lines(q)[0])[3:]
        result = run_cli("query", name, *args, "--graph", str(seeds_build.out / "graph.ttl"))
        assert result.code == 0, (name, result.err)
        widths = [len(line) for line in result.out.splitlines()]
        assert max(widths) <= 120, (name, result.out)


@pytest.mark.parametrize("value", ['SGD" } ; DROP ALL #', "SGD\nLIMIT 1", "x" * 1_000_000, "a\udcff", "\ud800"])
def test_hostile_binding_values_answer_or_refuse_in_one_line(run_cli, tmp_path, value):
    """Issue 50's bad input: quotes, newlines, a 1 MB value, lone surrogates (a non-UTF-8 byte as
    Python keeps it): a correct answer (no concept has that label) or one clear error, never a traceback."""
    graph = tmp_path / "g.ttl"
    graph.write_text('<http://x/c> <http://www.w3.org/2004/02/skos/core#prefLabel> "SGD" .\n')
    result = run_cli("query", "papers-of-concept", "--graph", str(graph), "--bind", f"label={value}", "--format", "csv")
    assert "Traceback" not in result.err
    if result.code == 0:
        assert result.out.count("\n") == 1  # the header: no paper has a concept of that label
    else:
        assert result.code == 4 and len(result.err.strip().splitlines()) == 1 and len(result.err) < 500, result.err


def test_a_missing_required_binding_is_a_query_error(run_cli, project, tmp_path):
    """Issue 50: a query left without what it needs does not answer "(0 rows)"."""
    graph = tmp_path / "g.ttl"
    graph.write_text("<http://x/p> <http://x/name> \"P\" .\n")
    missing = run_cli("query", "papers-of-concept", "--graph", str(graph))
    assert missing.code == 4 and "needs one of ?label or ?concept" in missing.err and missing.out == ""
    typo = run_cli("query", "papers-of-concept", "--graph", str(graph), "--bind", "labl=SGD")
    assert typo.code == 4 and "did you mean ?label?" in typo.err
    name = run_cli("query", "paper-of-concept", "--graph", str(graph))
    assert name.code == 4 and "did you mean papers-of-concept" in name.err
    wrong = run_cli("query", "rising-concepts", "--graph", str(graph), "--bind", "min=many")
    assert wrong.code == 4 and "is a whole number" in wrong.err
    helped = run_cli("query", "papers-of-concept", "--help")
    assert helped.code == 0 and "Parameters (--bind NAME=VALUE):" in helped.out and "kg query papers-of-concept --bind" in helped.out
    listed = run_cli("queries")
    assert "--bind ?label* ?concept*" in listed.out
