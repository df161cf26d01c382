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
        "arxiv.jsonl, row 3 (arXiv 0705.0001): no abstract (the 'abstract' field is missing or empty); row skipped",
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
