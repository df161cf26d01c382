"""BibTeX, RIS, Web of Science, OpenAlex and arXiv input: real exports (tests/data/formats, see
its README), the bad inputs of issue 23, detection by suffix and content, stable ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.text.formats.openalex import abstract_text
from kg.text.records import Author
from kg.text.sources import paper_id, read_papers

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"


@pytest.fixture()
def here(tmp_path, monkeypatch):
    """A work folder holding copies of the real exports, and the current directory (so files are named relative to it)."""
    for f in DATA.iterdir():
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def said(report, reason=None):
    return [str(w) for w in report.warnings if reason is None or w.reason == reason]


# --------------------------------------------------------------------------- BibTeX


def test_bibtex_of_biber_reads_the_entries_with_an_abstract_and_names_the_others(here):
    report = read_papers(["biber-examples.bib"])
    assert [p.source_id for p in report.papers] == ["kastenholz", "sigfridsson", "itzhaki", "laufenberg", "padhye", "i1"]
    assert report.skipped == {"row_without_abstract": 112}
    assert "biber-examples.bib, entry westfahl:space (line 11): no abstract (the 'abstract' field is missing); entry skipped" in said(report)
    kastenholz, sigfridsson, itzhaki = report.papers[:3]
    # LaTeX in fields: an accent in a name, biblatex's \hyphen in a title, an @string macro as the venue
    assert kastenholz.authors == (Author("M. A. Kastenholz"), Author("Philippe H. Hünenberger"))
    assert kastenholz.title.startswith("Computation of methodology-independent ionic solvation free energies")
    assert kastenholz.venue == "J. Chem. Phys." and kastenholz.year == 2006 and kastenholz.doi == "10.1063/1.2172593"
    assert sigfridsson.doi == "10.1002/(sici)1096-987x(199803)19:4<377::aid-jcc1>3.0.co;2-p"
    assert itzhaki.arxiv == "hep-th/9603067"  # eprint with eprinttype arxiv
    assert [str(s) for s in kastenholz.sources] == ["biber-examples.bib, line 140"]
    assert kastenholz.id == paper_id(kastenholz.abstract)  # the id of the abstract's content, as for any input


def test_bibtex_traps_of_bibtexparser(here):
    """Braces that protect case, a name with a comma (Last, First), a quoted month, a multi-line abstract."""
    (paper,) = read_papers(["traps.bib"]).papers
    assert paper.title == "An amazing title" and paper.venue == "Nice Journal" and paper.year == 2013
    assert paper.abstract.startswith("This is an abstract. This line should be long enough to test multilines...")
    assert paper.text.endswith("with a french érudit word")
    assert paper.authors == (Author("Ben Loaeb Jean Laidé"),)  # BibTeX reads "Jean Laid{\'e}, Ben Loaeb" as Last, First


def test_bibtex_comments_preamble_and_a_string_used_as_a_title(here):
    report = read_papers(["comments_spaces_and_declarations.bib"])
    (paper,) = report.papers
    assert paper.title == "A great title" and paper.authors == (Author("Jean César"),) and report.warnings == ()


def test_bibtex_without_any_abstract_is_an_error_naming_the_file(here):
    with pytest.raises(InputError, match="no abstracts found in article_with_strings.bib"):
        read_papers(["article_with_strings.bib"])


BAD_BIB = r"""@string{jmlr = "Journal of Machine Learning Research"}
@comment{This library was exported by hand; @article{hidden, abstract = {not an entry}}}
@article{good1,
  title = {A first {good} paper on Schr{\"o}dinger bridges},
  author = {Doe, Jane and R{\'e}my, Richard and others},
  journal = jmlr # " (" # "JMLR" # ")",
  year = {2021},
  doi = {https://doi.org/10.5555/ABC.123},
  abstract = {We study the convergence of stochastic gradient descent with $\alpha$-smooth losses in Schr{\"o}dinger bridges.}
}
@article{broken,
  title = {An unbalanced {title,
  year = {2020},
  abstract = {This abstract is never closed.
}
@article{good2,
  title = {Second}, year = 2022, doi = {not a doi},
  abstract = {Graph neural networks learn on graphs.}
}
@article{good2,
  title = {Second again}, year = 2023, journal = nojournal,
  abstract = {A duplicate key with another abstract.}
}
@article{noabs, title = {No abstract here}, year = 2019}
article{typo, title = {Lost}, abstract = {An entry without its at sign.}}
"""


def test_bad_bibtex_names_each_problem_in_one_line_and_reads_the_rest(here):
    (here / "bad.bib").write_text(BAD_BIB, encoding="utf-8")
    report = read_papers(["bad.bib"])
    assert [p.source_id for p in report.papers] == ["good1", "good2", "good2"]
    good1, good2, again = report.papers
    assert good1.venue == "Journal of Machine Learning Research (JMLR)"  # the macro, concatenated
    assert good1.title == "A first good paper on Schrödinger bridges" and good1.doi == "10.5555/abc.123"
    assert good1.authors == (Author("Jane Doe"), Author("Richard Rémy"))  # "others" is not an author
    assert good1.abstract.startswith(r"We study the convergence of stochastic gradient descent with $\alpha$-smooth")  # as given
    assert "Schrödinger bridges" in good1.text and "$" not in good1.text  # cleaned as any abstract, accents decoded
    assert (good2.title, good2.doi, again.title, again.venue) == ("Second", None, "Second again", None)
    assert said(report) == [
        "bad.bib, line 11: @article does not parse (unexpected block start: `@article`. Was still looking for field-value closing "
        "`}`, at line 16): an unbalanced brace or quote?; entry skipped, fix it and rebuild",
        "bad.bib, entry good2 (line 16): DOI 'not a doi' is not a DOI (10.<registrant>/<suffix>); the paper is kept without it",
        "bad.bib, entry good2 (line 20): the key 'good2' is also the key of the entry at line 16; read as another record "
        "(give each entry its own key)",
        "bad.bib, entry good2 (line 20): journal: @string macro 'nojournal' is not defined; the paper is kept without this field "
        "(define it with @string)",
        "bad.bib, entry noabs (line 24): no abstract (the 'abstract' field is missing); entry skipped",
        "bad.bib, line 25: text between entries that looks like an entry without its @ ('article{typo, title = {Lost}, abstract = {An ent…); "
        "not read, write @type{key, ...} to read it",
    ]
    assert report.skipped == {"malformed_row": 1, "row_without_abstract": 1}


def test_a_repeated_field_keeps_the_first_with_a_warning(here):
    (here / "twice.bib").write_text("@article{a, year = {2020}, year = {2021}, abstract = {Repeated fields.}}\n", encoding="utf-8")
    report = read_papers(["twice.bib"])
    assert report.papers[0].year == 2020
    assert said(report) == ["twice.bib, entry a (line 1): field 'year' given 2 times ('{2020}', '{2021}'); the first is kept"]


def _doubling(levels: int) -> str:
    """@string macros that double each other *levels* times (2 ** levels * 2 characters in full)."""
    return '@string{a0 = "xx"}\n' + "".join(f"@string{{a{i} = a{i - 1} # a{i - 1}}}\n" for i in range(1, levels + 1))


def test_macros_that_double_each_other_are_not_built_past_the_limit(here):
    """Issue 43: 40 levels of doubling (3.8 KB) took 2 GB in 6 s; the limit applies while expanding."""
    bib = _doubling(40) + "@article{k, title = a40, journal = a3, abstract = {Graph networks pass messages.}}\n"
    bib += "@article{big, title = {T}, abstract = a40 # {.}}\n"
    (here / "double.bib").write_text(bib, encoding="utf-8")
    report = read_papers(["double.bib"])
    (paper,) = report.papers
    assert paper.title is None and paper.venue == "x" * 16  # kept without the field that uses a40
    assert report.skipped == {"row_without_abstract": 1}
    told = said(report, "macro_too_long")
    assert told[0] == ("double.bib, @string a16 (line 17): expands past kg's limit of 100,000 characters (macros that repeat each "
                       "other?); 'a16' is not defined, and fields that use it are left out")
    cause = "(@string a16 (line 17) expands past kg's limit of 100,000 characters (macros that repeat each other?))"
    assert f"double.bib, @string a40 (line 41): uses 'a39', which is not defined {cause}; 'a40' is not defined, and fields that use it are left out" in said(report)
    assert (f"double.bib, entry k (line 42): title: @string macro 'a40' {cause} is not defined; the paper is kept without this field "
            "(define it with @string)") in said(report, "undefined_macro")
    assert "double.bib, entry big (line 43): no abstract (the 'abstract' field is missing); entry skipped" in said(report)


def test_a_field_of_macros_past_the_limit_is_not_built(here):
    bib = _doubling(15) + "@article{k, title = a15 # a15, journal = a12, abstract = {Graph networks pass messages.}}\n"  # 2 x 65,536
    (here / "wide.bib").write_text(bib, encoding="utf-8")
    report = read_papers(["wide.bib"])
    (paper,) = report.papers
    assert paper.title is None and paper.venue == "x" * 8192
    assert said(report) == [
        "wide.bib, entry k (line 17): title: its @string macros expand past kg's limit of 100,000 characters; not built, the paper "
        "is kept without this field (macros that repeat each other?)"]


def test_what_the_macros_of_a_file_build_in_all_is_bounded(here, monkeypatch):
    """One macro of 8,192 characters used by many small entries: each is under the limit, the file's sum is bounded."""
    import kg.text.files

    bib = _doubling(12) + "".join(f"@article{{e{i}, journal = a12, abstract = {{Abstract {i}.}}}}\n" for i in range(4))
    (here / "many.bib").write_text(bib, encoding="utf-8")
    monkeypatch.setattr(kg.text.files, "MAX_RECORD_CHARS", 30_000)  # the macros take 16,380, the first entry 8,192
    report = read_papers(["many.bib"])
    assert [p.venue is None for p in report.papers] == [False, True, True, True]
    assert said(report) == [
        f"many.bib, entry e{i} (line {14 + i}): journal: its @string macros expand past what kg builds from macros in one file "
        "(30,000 characters in all); not built, the paper is kept without this field (macros that repeat each other?)" for i in (1, 2, 3)]


def test_doubling_macros_are_read_at_once(here):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_clean import _finishes

    from kg.text.formats.bibtex import read_bibtex

    bib = _doubling(40) + "".join(f"@article{{k{i}, title = a40, abstract = a15 # a15 # {{{i}}}}}\n" for i in range(200))
    got = []
    assert _finishes(lambda: got.append(read_bibtex("x.bib", bib)), seconds=10)
    records, warnings, skipped = got[0]
    assert records == [] and skipped == {"row_without_abstract": 200}
    assert sum(w.reason == "macro_too_long" for w in warnings) == 1 + 200  # a16, then each abstract


def test_a_macro_used_before_it_is_defined_or_by_itself_is_named(here):
    """Issue 43: these left the title and journal empty without a word."""
    bib = ("@string{fwd = later}\n@string{self = self # self}\n@string{later = {Later}}\n@string{next = fwd # {!}}\n"
           "@article{k, title = fwd, journal = self, series = next, abstract = {Graph networks pass messages.}}\n")
    (here / "order.bib").write_text(bib, encoding="utf-8")
    report = read_papers(["order.bib"])
    (paper,) = report.papers
    assert paper.title is None and paper.venue is None
    assert said(report) == [
        "order.bib, @string fwd (line 1): uses 'later' before its @string at line 3; 'fwd' is not defined, and fields that use it are left out",
        "order.bib, @string self (line 2): uses itself; 'self' is not defined, and fields that use it are left out",
        "order.bib, @string next (line 4): uses 'fwd', which is not defined (@string fwd (line 1) uses 'later' before its @string at "
        "line 3); 'next' is not defined, and fields that use it are left out",
        "order.bib, entry k (line 5): title: @string macro 'fwd' (@string fwd (line 1) uses 'later' before its @string at line 3) is "
        "not defined; the paper is kept without this field (define it with @string)",
        "order.bib, entry k (line 5): journal: @string macro 'self' (@string self (line 2) uses itself) is not defined; the paper is "
        "kept without this field (define it with @string)",
        "order.bib, entry k (line 5): series: @string macro 'next' (@string fwd (line 1) uses 'later' before its @string at line 3) "
        "is not defined; the paper is kept without this field (define it with @string)",
    ]
    assert {w.reason for w in report.warnings} == {"undefined_macro"}


def test_a_doi_holding_a_right_to_left_override_is_a_warning_and_the_paper_is_kept_without_it(here):
    (here / "spoof.bib").write_text("@article{k, doi = {10.5555/abc\u202egpj.1}, abstract = {Graph networks pass messages.}}\n"
                                    "@article{j, eprint = {2401.00001\ufffd}, eprinttype = {arXiv}, abstract = {Another abstract.}}\n",
                                    encoding="utf-8")
    report = read_papers(["spoof.bib"])
    assert [(p.doi, p.arxiv) for p in report.papers] == [(None, None), (None, None)]
    assert said(report, "bad_identifier") == [
        "spoof.bib, entry k (line 1): DOI '10.5555/abc\\u202egpj.1' is not a DOI: it holds U+202E RIGHT-TO-LEFT OVERRIDE, an "
        "invisible or bidirectional format character (it could make one identifier look like another); the paper is kept without it",
        "spoof.bib, entry j (line 2): arXiv id '2401.00001\ufffd' is not an arXiv id: it holds U+FFFD REPLACEMENT CHARACTER, the mark "
        "of a character that could not be decoded (it could make one identifier look like another); the paper is kept without it",
    ]


# --------------------------------------------------------------------------- RIS and Web of Science


def test_ris_of_rispy(here):
    report = read_papers(["example_full.ris", "example_utf_chars.ris"])
    first, second, russian = report.papers
    assert (first.title, first.venue, first.year, first.source_id) == ("Title of reference", "Lorem", 2014, "12345")
    assert first.authors == (Author("Karl Marx"), Author("Astrid Lindgren"))  # A1, Last, First; not A2 (editors)
    assert first.abstract.startswith("BACKGROUND: Lorem ipsum dolor sit amet")  # N2
    assert [str(p.sources[0]) for p in report.papers] == ["example_full.ris, line 2", "example_full.ris, line 27",
                                                          "example_utf_chars.ris, line 1"]
    assert russian.abstract.startswith("Состояние рецепторного аппарата") and russian.year == 2009
    assert russian.authors[0] == Author("Yu E. Dobrokhotova") and russian.venue == "Gynecology, Obstetrics and Perinatology"


def test_ris_continuation_lines_join_the_abstract(here):
    report = read_papers(["example_multiline.ris"])
    assert report.papers[0].abstract == "first line, ER then second line and at the end the last line"
    assert report.duplicates_merged == 2  # the file's three records have that abstract


def test_web_of_science_tagged_export(here):
    first, second = read_papers(["example_wos.ris"]).papers
    assert first.title.startswith("Interactions stabilizing the structure of the core light-harvesting complex")
    assert (first.venue, first.year, first.doi, first.source_id) == ("BIOCHEMISTRY", 2004, "10.1021/bi049798f", "WOS:000221807500019")
    assert first.authors[:2] == (Author("PS Parkes-Loach"), Author("AP Majeed"))
    assert str(second.sources[0]) == "example_wos.ris, line 112"


def test_ris_without_er_at_the_end_and_between_records_is_read_with_a_warning(here):
    (here / "cut.ris").write_text(
        "TY  - JOUR\nTI  - First\nAB  - The first abstract.\nER  - \n\n"
        "TY  - JOUR\nTI  - Second\nAB  - The second abstract, whose record runs into the next.\n"
        "TY  - JOUR\nTI  - Third\nAU  - Doe, Jane\nAB  - The third abstract, cut short: the export stopped here.\n",
        encoding="utf-8")
    report = read_papers(["cut.ris"])
    assert [p.title for p in report.papers] == ["First", "Second", "Third"]
    assert report.papers[2].authors == (Author("Jane Doe"),)
    assert said(report) == [
        "cut.ris, record at line 6: no 'ER' line before the next record starts at line 9; read up to there (end each record with an 'ER' line)",
        "cut.ris, record at line 9: no 'ER' line before the file ends; read up to there (end each record with an 'ER' line)",
    ]


def test_a_txt_file_that_is_ris_or_bibtex_is_read_as_such(here):
    (here / "zotero.txt").write_text("TY  - JOUR\nTI  - From Zotero\nAB  - An abstract exported as RIS.\nER  - \n", encoding="utf-8")
    (here / "library.txt").write_text("% Encoding: UTF-8\n\n@Article{k, abstract = {An abstract exported as BibTeX.}}\n",
                                      encoding="utf-8")
    assert [p.abstract for p in read_papers(["zotero.txt", "library.txt"]).papers] == [
        "An abstract exported as RIS.", "An abstract exported as BibTeX."]


@pytest.mark.parametrize("name", ["savedrecs.txt", "savedrecs.ris"])
def test_a_web_of_science_export_with_no_records_is_an_error_not_an_abstract(here, name):
    """Issue 43: read as an abstract list, it gave one paper whose abstract was "VR 1.0 EF"."""
    (here / name).write_text("FN Clarivate Analytics Web of Science\nVR 1.0\nEF\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{name}: a Web of Science export with no records \(no 'PT' line between its 'FN' and "
                       r"'EF' lines\); export the records again"):
        read_papers([name])


def test_an_ris_file_with_no_records_is_an_error_saying_so(here):
    (here / "none.ris").write_text("Provider: nobody\nContent: text/plain\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^none.ris: an RIS file with no records \(no 'TY  - ' line\); export RIS records"):
        read_papers(["none.ris"])


@pytest.mark.parametrize("text, why", [('{"meta": {"count": 0}, "results": []}', "an OpenAlex API response with no works "
                                        "\\(its 'results' list is empty\\)"), ("[]", "an empty JSON list; put OpenAlex works")])
def test_a_json_document_with_no_works_is_an_error_saying_so(here, text, why):
    (here / "none.json").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=rf"^none.json: {why}"):
        read_papers(["none.json"])


# --------------------------------------------------------------------------- OpenAlex


def test_openalex_work_from_the_api(here):
    (paper,) = read_papers(["openalex-W2741809807.json"]).papers
    assert paper.abstract.startswith("Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet need")
    assert paper.abstract.endswith("as a way to inform OA policy and practice.") and len(paper.abstract.split()) == 258
    assert (paper.venue, paper.year, paper.doi) == ("PeerJ", 2018, "10.7717/peerj.4375")
    assert paper.source_id == "https://openalex.org/W2741809807"
    assert paper.authors[0] == Author("Heather Piwowar", "0000-0003-1613-5981") and len(paper.authors) == 9
    assert paper.authors[3] == Author("Juan Pablo Alperín", "0000-0002-9344-7439")
    assert all(a.orcid for a in paper.authors)


def _work(**fields):
    work = json.loads((DATA / "openalex-W2741809807.json").read_text(encoding="utf-8"))
    return work | fields


def test_openalex_list_api_response_and_json_lines_give_the_same_paper(here):
    work = _work()
    (here / "response.json").write_text(json.dumps({"meta": {"count": 1, "page": 1, "per_page": 25}, "results": [work]}), encoding="utf-8")
    (here / "list.json").write_text(json.dumps([work]), encoding="utf-8")
    (here / "works.jsonl").write_text(json.dumps(work) + "\n", encoding="utf-8")
    report = read_papers(["response.json", "list.json", "works.jsonl", "openalex-W2741809807.json"])
    assert len(report.papers) == 1 and report.duplicates_merged == 3  # one abstract, one stable id
    assert [str(s) for s in report.papers[0].sources] == ["response.json, row 1", "list.json, row 1", "works.jsonl, row 1",
                                                          "openalex-W2741809807.json, row 1"]


def test_openalex_works_with_a_null_or_empty_or_broken_index_are_named_and_the_others_read(here):
    rows = [_work(id="https://openalex.org/W1", abstract_inverted_index=None),
            _work(id="https://openalex.org/W2", abstract_inverted_index={}),
            _work(id="https://openalex.org/W3", abstract_inverted_index={"We": ["zero"]}),
            _work(id="https://openalex.org/W4", doi="https://doi.org/10.12", abstract_inverted_index={"Graphs": [0], "matter.": [1]},
                  authorships=[{"author": {"display_name": "Ada Lovelace", "orcid": "https://orcid.org/0000-0002-1825-0098"}}]),
            "a string"]
    (here / "works.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = read_papers(["works.jsonl"])
    (paper,) = report.papers
    assert paper.abstract == "Graphs matter." and paper.authors == (Author("Ada Lovelace"),) and paper.doi is None
    assert said(report) == [
        "works.jsonl, row 1 (W1): no abstract (the 'abstract_inverted_index' is null: OpenAlex has no abstract of this work); work skipped",
        "works.jsonl, row 2 (W2): no abstract (the 'abstract_inverted_index' is empty); work skipped",
        "works.jsonl, row 3 (W3): an 'abstract_inverted_index' that is not words with lists of positions ({'We': ['zero']}); work skipped",
        "works.jsonl, row 4 (W4): DOI 'https://doi.org/10.12' is not a DOI (10.<registrant>/<suffix>); the paper is kept without it",
        "works.jsonl, row 4 (W4): ORCID of Ada Lovelace: 'https://orcid.org/0000-0002-1825-0098' is not an ORCID iD (its check digit "
        "is wrong); the author is kept without it",
        "works.jsonl, row 5: not a JSON object (an OpenAlex work) but 'a string'; row skipped",
    ]
    assert report.skipped == {"row_without_abstract": 2, "malformed_row": 2}


def test_an_inverted_index_is_put_back_in_the_order_of_its_positions():
    assert abstract_text({"b": [1, 3], "a": [0], "c": [2]}) == "a b c b"
    assert abstract_text({"a": [0], "b": [-1]}) is None and abstract_text(["a"]) is None


def test_an_inverted_index_past_the_limit_is_refused_before_it_is_rebuilt(here):
    """Issue 43: the abstract was rebuilt from every position (a tuple each, sorted) before its length was checked."""
    import tracemalloc

    from kg.text.formats.openalex import read_openalex_works

    works = [_work(id="https://openalex.org/W1", abstract_inverted_index={"a": list(range(1_000_000))}),
             _work(id="https://openalex.org/W2", abstract_inverted_index={"Graphs": [0], "matter.": [1_000_000_000]}),
             _work(id="https://openalex.org/W3", abstract_inverted_index={"Graphs": [0], "matter.": [7]})]
    tracemalloc.start()
    try:
        records, warnings, skipped = read_openalex_works("x.json", works)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak:,} bytes"  # 1,000,000 positions: ~70 MB when rebuilt first
    assert [r.abstract for r in records] == ["Graphs matter."] and skipped == {"too_long": 1, "malformed_row": 1}
    assert [str(w) for w in warnings] == [
        "x.json, row 1 (W1): abstract of 1,999,999 characters, over kg's limit of 100,000; work skipped (check that it is an abstract)",
        "x.json, row 2 (W2): an 'abstract_inverted_index' with a word at position 1,000,000,000, past any abstract kg reads "
        "(100,000 characters); work skipped",
    ]


# --------------------------------------------------------------------------- arXiv


def test_arxiv_snapshot_lines(here):
    first, second = read_papers(["arxiv-metadata-oai-snapshot.json"]).papers
    assert (first.arxiv, first.source_id, first.year, first.venue, first.doi) == ("0704.0002", "0704.0002", 2007, "math.CO", None)
    assert first.title == "Sparsity-certifying Graph Decompositions"
    assert first.authors == (Author("Ileana Streinu"), Author("Louis Theran"))
    assert first.abstract.startswith(r"We describe a new algorithm, the $(k,\ell)$-pebble game with colors")
    assert (second.arxiv, second.year, second.venue) == ("hep-th/9608091", 1996, "hep-th")  # year of the first version
    assert second.journal_ref == "Phys.Lett.B390:243-251,1997" and second.doi == "10.1016/s0370-2693(96)01409-8"
    assert second.authors[0] == Author("D. Fioravanti") and len(second.authors) == 4


def test_withdrawn_arxiv_papers_are_named_and_skipped(here):
    lines = (DATA / "arxiv-metadata-oai-snapshot.json").read_text(encoding="utf-8").splitlines()
    withdrawn = json.loads(lines[0]) | {"id": "0704.9999", "abstract": "  This paper has been withdrawn by the author due to a crucial\nerror in Lemma 2.\n"}
    missing = json.loads(lines[0]) | {"id": "0705.0001", "abstract": None}
    (here / "arxiv.jsonl").write_text("\n".join([json.dumps(withdrawn), lines[1], json.dumps(missing)]) + "\n", encoding="utf-8")
    report = read_papers(["arxiv.jsonl"])
    assert [p.arxiv for p in report.papers] == ["hep-th/9608091"]
    assert said(report) == [
        "arxiv.jsonl, row 1 (arXiv 0704.9999): withdrawn: its abstract is arXiv's notice ('This paper has been withdrawn by the author "
        "due to a cruci…); row skipped",
        "arxiv.jsonl, row 3 (arXiv 0705.0001): no abstract (the 'abstract' field is missing); row skipped",
    ]
    assert report.skipped == {"withdrawn": 1, "row_without_abstract": 1}


# --------------------------------------------------------------------------- detection, folders


def test_kg_rows_in_json_and_jsonl_are_still_kg_rows(here):
    (here / "rows.json").write_text(json.dumps([{"abstract": "Rows of kg in a JSON array.", "venue": "ICML", "year": 2024}]), encoding="utf-8")
    (here / "rows.jsonl").write_text(json.dumps({"abstract": "Rows of kg in JSON Lines.", "id": "x1"}) + "\n", encoding="utf-8")
    report = read_papers(["rows.json", "rows.jsonl"])
    assert [(p.abstract, p.venue, p.source_id) for p in report.papers] == [("Rows of kg in a JSON array.", "ICML", None),
                                                                           ("Rows of kg in JSON Lines.", None, "x1")]


def test_a_json_file_that_is_not_json_is_an_error_naming_it(here):
    (here / "broken.json").write_text('{"results": [', encoding="utf-8")
    with pytest.raises(InputError, match=r"^broken\.json: not valid JSON \(Expecting value at line 1, column 14\)"):
        read_papers(["broken.json"])


def test_a_folder_reads_bibtex_ris_and_json_files(here):
    folder = here / "library"
    folder.mkdir()
    for name in ("traps.bib", "example_full.ris", "openalex-W2741809807.json"):
        shutil.copy(DATA / name, folder / name)
    report = read_papers(["library"])
    assert sorted(p.sources[0].file for p in report.papers) == ["library/example_full.ris", "library/example_full.ris",
                                                               "library/openalex-W2741809807.json", "library/traps.bib"]


# --------------------------------------------------------------------------- hostile input (docs/input.md "Limits", "Lines")

ABSTRACT = "Graph neural networks learn node representations by message passing over edges."


def _arxiv_row(**fields):
    line = (DATA / "arxiv-metadata-oai-snapshot.json").read_text(encoding="utf-8").split("\n")[0]
    return json.loads(line) | fields


def _rows(here, name, rows, end="\n"):
    (here / name).write_text(end.join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + end,
                             encoding="utf-8")
    return read_papers([name])


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("kind", ["openalex", "arxiv"])
def test_json_lines_of_works_are_split_at_line_ends_only(here, kind, end):
    """U+2028, U+2029 and U+0085 in a JSON string end no row; any line end (\\r of old Macs too) does."""
    make = (lambda i, t: _work(id=f"https://openalex.org/W{i}", doi=f"https://doi.org/10.5555/row.{i}", title=t,
                               abstract_inverted_index={f"Row{i}": [0], "text.": [1]})) \
        if kind == "openalex" else (lambda i, t: _arxiv_row(id=f"0704.000{i}", doi=f"10.5555/row.{i}", title=t, abstract=f"Row{i} text."))
    report = _rows(here, "works.jsonl", [make(1, "a\u2028b"), make(2, "c\u2029d\x85e")], end=end)
    assert [p.abstract for p in report.papers] == ["Row1 text.", "Row2 text."] and said(report) == []
    assert [p.title for p in report.papers] == ["a b", "c d e"]
    assert [p.venue for p in report.papers] == (["PeerJ"] * 2 if kind == "openalex" else ["math.CO"] * 2)  # read as works, not kg rows


@pytest.mark.parametrize("kind", ["openalex", "arxiv"])
def test_rows_of_works_kg_cannot_read_are_each_named_and_the_others_read(here, kind, monkeypatch):
    import kg.text.files

    good = _work(abstract_inverted_index={"Graphs": [0], "matter.": [1]}) if kind == "openalex" else _arxiv_row(abstract="Graphs matter.")
    first = json.dumps(good)
    monkeypatch.setattr(kg.text.files, "MAX_RECORD_CHARS", 300_000)
    rows = [first,
            first[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}",  # nested past the recursion limit
            "[1, 2]",  # not an object
            first[:-1] + ', "pad": "' + "p" * 300_000 + '"}',  # over the row limit
            first[:-1] + ', "n": ' + "9" * 5_000 + "}"]  # a whole number of 5,000 digits: read
    report = _rows(here, "rows.jsonl", rows)
    assert [str(s) for s in report.papers[0].sources] == ["rows.jsonl, row 1", "rows.jsonl, row 5"]
    assert said(report, "malformed_row")[0] == "rows.jsonl, row 2: JSON nested too deep to read; row skipped, fix it and rebuild"
    assert said(report, "malformed_row")[1].startswith("rows.jsonl, row 3: not a JSON object")
    assert said(report, "too_long") == [f"rows.jsonl, row 4: row of {len(rows[3]):,} characters, over kg's limit of 300,000; "
                                        "row skipped (is it one JSON object a line?)"]
    assert report.skipped == {"malformed_row": 2, "too_long": 1}


def test_escaped_unpaired_surrogates_in_works_are_replacement_characters_with_a_warning(here):
    work = json.dumps(_work(id="https://openalex.org/W9", title="T", abstract_inverted_index={"Graphs": [0], "X": [1]}))
    work = work.replace('"T"', '"T \\ud800"').replace('"X"', '"\\udfff \\ud83d\\ude00"')
    arxiv = json.dumps(_arxiv_row(abstract="Graphs pass messages.")).replace("Graphs pass", "Graphs \\ud800 pass")
    report = read_papers([*(_write(here, n, t) for n, t in (("w.jsonl", work), ("a.jsonl", arxiv), ("w.json", f"[{work}]")))])
    assert [p.abstract for p in report.papers] == ["Graphs \ufffd \U0001f600", "Graphs \ufffd pass messages."]
    assert report.papers[0].title == "T \ufffd"
    assert said(report, "unpaired_surrogate") == [
        f"{n}, row 1: the {f} an escaped unpaired surrogate (such as \\ud800), which is no character; read as U+FFFD"
        for n, f in (("w.jsonl", "title and abstract_inverted_index hold"), ("a.jsonl", "abstract holds"),
                     ("w.json", "title and abstract_inverted_index hold"))]


def _write(here, name, text):
    (here / name).write_text(text + "\n", encoding="utf-8")
    return name


LONG_BIB = """@article{long1, title = {%(title)s}, author = {%(author)s and Jane Doe}, journal = {%(venue)s},
  abstract = {%(abstract)s}}
@article{fine, title = {Fine}, abstract = {%(fine)s}}
"""
LONG_RIS = "TY  - JOUR\nID  - %(id)s\nTI  - %(title)s\nAU  - %(author)s\nAU  - Doe, Jane\nT2  - %(venue)s\nAB  - %(abstract)s\nER  - \n" \
           "TY  - JOUR\nTI  - Fine\nAB  - %(fine)s\nER  - \n"


@pytest.mark.parametrize("kind", ["bibtex", "ris", "wos", "openalex", "arxiv", "json"])
def test_every_format_skips_an_abstract_over_the_limit_and_drops_a_field_over_the_limit(here, kind, monkeypatch):
    import kg.text.files

    monkeypatch.setattr(kg.text.files, "MAX_ABSTRACT_CHARS", 1_000)
    monkeypatch.setattr(kg.text.files, "MAX_FIELD_CHARS", 100)
    long = {"title": "t" * 101, "author": "a" * 101, "venue": "v" * 101, "abstract": "word " * 300, "fine": ABSTRACT, "id": "i" * 101}
    short = dict(long, abstract=ABSTRACT + " Short.")
    if kind == "bibtex":
        name, text = "x.bib", LONG_BIB % long + LONG_BIB.replace("long1", "short1").replace("{fine,", "{fine2,") % short
    elif kind == "ris":
        name, text = "x.ris", LONG_RIS % long + LONG_RIS % short
    elif kind == "wos":
        wos = "PT J\nUT %(id)s\nTI %(title)s\nAF %(author)s\n   Doe, Jane\nSO %(venue)s\nAB %(abstract)s\nER\n\nPT J\nTI Fine\nAB %(fine)s\nER\n"
        name, text = "x.txt", "FN Clarivate Analytics Web of Science\nVR 1.0\n" + wos % long + wos % short + "EF\n"
    else:
        def item(d):
            if kind == "arxiv":
                return _arxiv_row(id=d["id"], title=d["title"], abstract=d["abstract"], authors_parsed=[[d["author"], ""], ["Doe", "Jane"]])
            words = d["abstract"].split()
            return _work(id=d["id"], title=d["title"], abstract_inverted_index={w: [i] for i, w in enumerate(words)} if len(set(words)) > 1
                         else {words[0]: list(range(len(words)))},
                         primary_location={"source": {"display_name": d["venue"]}},
                         authorships=[{"author": {"display_name": d["author"]}}, {"author": {"display_name": "Jane Doe"}}])
        items = [item(long), item(dict(long, abstract=ABSTRACT, id="fine")), item(short)]
        name = "x.json" if kind == "json" else "x.jsonl"
        text = json.dumps(items) if kind == "json" else "\n".join(json.dumps(i) for i in items)
    (here / name).write_text(text, encoding="utf-8")
    report = read_papers([name])
    assert report.skipped.get("too_long") == 1, said(report)
    (too_long,) = said(report, "too_long")
    assert "abstract of 1,499 characters, over kg's limit of 1,000;" in too_long and "skipped" in too_long
    assert too_long.startswith(f"{name}, "), too_long
    short_paper = next(p for p in report.papers if p.abstract.startswith(ABSTRACT + " Short"))
    assert short_paper.title is None and short_paper.venue != "v" * 101 and short_paper.source_id != "i" * 101
    assert short_paper.authors == (Author("Jane Doe"),)
    dropped = said(report, "bad_field")
    assert all("characters, over kg's limit of 100; the paper is kept without" in w for w in dropped), dropped
    assert any(w.startswith(f"{name}, ") and "title of 101 characters" in w for w in dropped), dropped


def test_bibtex_of_text_shaped_against_the_cleaning_reads_at_once(here):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_clean import HOSTILE_TEXTS, _finishes

    from kg.text.files import MAX_FIELD_CHARS
    from kg.text.formats.bibtex import read_bibtex

    for shape, text in HOSTILE_TEXTS.items():
        bib = f"@article{{k,\n title = {{{text[:MAX_FIELD_CHARS]}}},\n abstract = {{{text}}}\n}}\n"
        assert _finishes(read_bibtex, "x.bib", bib), shape


def test_ris_records_of_100000_and_300000_lines_are_read_at_once(here):
    """rispy joins a continuation line to the text before it, a copy of it each time: kg joins them first."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_clean import _finishes

    notes = "TY  - JOUR\nTI  - T\nAB  - Graph networks pass messages.\nN2  - Notes\n" + "on messages\n" * 100_000 + "ER  - \n"
    long = "TY  - JOUR\nTI  - T\nAB  - Graph networks\n" + "pass messages\n" * 300_000 + "KW  - a\nKW  - b\n  c\nER  - \n"
    (here / "long.ris").write_text(notes, encoding="utf-8")
    (here / "longer.ris").write_text(long + "TY  - JOUR\nAB  - Fine.\nER  - \n", encoding="utf-8")
    got = []
    assert _finishes(lambda: got.append(read_papers(["long.ris", "longer.ris"])), seconds=20)
    assert [p.abstract for p in got[0].papers] == ["Graph networks pass messages.", "Fine."]
    assert said(got[0], "too_long") == ["longer.ris, record at line 1: abstract of 4,200,014 characters, over kg's limit of 100,000; "
                                        "record skipped (check that it is an abstract)"]


def test_bibtexparser_on_two_megabytes_after_an_unbalanced_brace_names_the_entry(here):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_clean import _finishes

    entries = "".join(f"@article{{k{i},\n title = {{T{i}}},\n abstract = {{Abstract number {i} about graphs.}}\n}}\n"
                      for i in range(20_000))
    (here / "unbalanced.bib").write_text("@article{bad,\n title = {Unbalanced {brace,\n" + entries, encoding="utf-8")
    got = []
    assert _finishes(lambda: got.append(read_papers(["unbalanced.bib"])), seconds=60)
    report = got[0]
    assert said(report, "malformed_row")[0].startswith("unbalanced.bib, line 1: @article does not parse")


def test_two_megabytes_between_entries_that_start_like_entries_are_looked_at_once(here):
    """Text outside any entry is looked at for an entry that lost its @: once, whatever its shape."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_clean import _finishes

    from kg.text.formats.bibtex import _looks_like_entry

    assert _finishes(_looks_like_entry, "a{b,\n" * 100_000, seconds=20)  # 0.5 MB: ~40 s before
    assert _finishes(_looks_like_entry, "a{b" + "\n" * 500_000, seconds=20)
    assert _looks_like_entry("a{b,\n" * 1000 + " title = x") and not _looks_like_entry("a{b,\n" * 1000)


# --------------------------------------------------------------------------- the authors' keywords


def test_bibtex_keywords_split_at_semicolons_else_commas_with_latex_made_text(here):
    (here / "kw.bib").write_text(
        "@article{a, abstract = {The first abstract.}, keywords = {Graph  neural networks; message passing, GNNs;"
        " Sch{\\\"o}dinger equation; ; graph neural networks}}\n"
        "@article{b, abstract = {The second abstract.}, keywords = {deep learning, {\\emph{optimization}},  ,GNN}}\n"
        "@article{c, abstract = {The third abstract.}}\n", encoding="utf-8")
    first, second, third = read_papers(["kw.bib"]).papers
    assert first.keywords == ("Graph neural networks", "message passing, GNNs", "Schödinger equation")
    assert second.keywords == ("deep learning", "optimization", "GNN")
    assert third.keywords == ()


def test_bibtex_keywords_of_the_real_exports_are_read(here):
    (laide,) = read_papers(["traps.bib"]).papers
    assert laide.keywords == ("keyword1", "keyword2")


def test_ris_keywords_are_the_kw_lines_each_split_at_semicolons_only(here):
    first, second, russian = read_papers(["example_full.ris", "example_utf_chars.ris"]).papers
    assert first.keywords == ("Pippi", "Nordwind", "Piraten") and second.keywords == ("Pippi Langstrumpf", "Nordwind", "Piraten")
    assert russian.keywords == ()
    (here / "kw.ris").write_text("TY  - JOUR\nAB  - An abstract with keywords.\nKW  - deep learning; GNN\n"
                                 "KW  - Smith, fields of\nKW  - gnn\nKW  -  \nER  - \n", encoding="utf-8")
    (paper,) = read_papers(["kw.ris"]).papers
    assert paper.keywords == ("deep learning", "GNN", "Smith, fields of")


_WOS = """FN Clarivate Analytics Web of Science
VR 1.0
PT J
AU Doe, J
TI A title
SO A JOURNAL
DE Graph neural networks; message passing; knowledge
   graphs; Graph Neural Networks
ID CHEMICALLY SYNTHESIZED POLYPEPTIDES; IN-VITRO RECONSTITUTION
AB An abstract read from Web of Science.
PY 2020
UT WOS:000000000000001
ER

EF
"""


def test_web_of_science_keywords_are_de_not_keywords_plus(here):
    (here / "savedrecs.txt").write_text(_WOS, encoding="utf-8")
    (paper,) = read_papers(["savedrecs.txt"]).papers
    assert paper.keywords == ("Graph neural networks", "message passing", "knowledge graphs")
    assert all(p.keywords == () for p in read_papers(["example_wos.ris"]).papers)  # ID lines only: Keywords Plus


def test_openalex_keywords_concepts_and_topics_are_no_authors_keywords(here):
    # OpenAlex assigns all three by a model, with a score each: not what the authors chose
    (paper,) = read_papers(["openalex-W2741809807.json"]).papers
    assert paper.keywords == ()
    (here / "strings.json").write_text(json.dumps(_work(keywords=["open access", {"display_name": "Bronze OA"}, 42],
                                                        concepts=[{"display_name": "Medicine"}], topics=[])), encoding="utf-8")
    report = read_papers(["strings.json"])
    assert report.papers[0].keywords == () and said(report, "bad_field") == []


def test_arxiv_records_have_no_keywords(here):
    assert all(p.keywords == () for p in read_papers(["arxiv-metadata-oai-snapshot.json"]).papers)
