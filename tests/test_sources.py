import codecs
import json

import pytest

from kg.errors import InputError
from kg.sources import parse_header, paper_id, read_papers

ABSTRACT_A = "Graph neural networks learn node representations by message passing over edges."
ABSTRACT_B = "We propose a new optimizer for training large language models with low memory."


@pytest.mark.parametrize(
    "header, expected",
    [
        ("ICML 2026 Papers", ("ICML", 2026)),
        ("ICLR 2026 论文列表", ("ICLR", 2026)),
        ("NeurIPS 2025 採択論文", ("NeurIPS", 2025)),
        ("Proceedings of ACL 2024", ("ACL", 2024)),
        ("Articles acceptés à EMNLP 2023", ("EMNLP", 2023)),
        ("2026", (None, 2026)),
        ("论文列表", (None, None)),
    ],
)
def test_header_names_venue_and_year_in_any_language(header, expected):
    assert parse_header(header) == expected


def test_seed_files_give_38_papers_with_venue_year_and_sources(monkeypatch):
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    report = read_papers(["seeds"])
    assert len(report.papers) == 38 and report.warnings == ()
    venues = {(p.venue, p.year) for p in report.papers}
    assert venues == {("ICML", 2026), ("ICLR", 2026)}
    first = report.papers[0]
    assert first.sources[0].file == "seeds/000_81580565b26117f2.txt" and first.sources[0].paragraph == 2
    assert first.abstract.startswith("Federated Adversarial Learning (FAL)")
    assert sum(1 for p in report.papers if p.urls) == 2


def test_paper_id_is_stable_and_content_derived():
    assert paper_id(ABSTRACT_A) == paper_id("  " + ABSTRACT_A.replace(" ", "\n", 3))
    assert paper_id(ABSTRACT_A) != paper_id(ABSTRACT_B)
    assert paper_id(ABSTRACT_A) == "p" + __import__("hashlib").sha256(ABSTRACT_A.encode()).hexdigest()[:15]


def write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def test_missing_path_is_an_error_naming_it(tmp_path):
    with pytest.raises(InputError, match=r"^.*nope\.txt: no such file or folder; give abstract-list files or folders of them$"):
        read_papers([tmp_path / "nope.txt"])


def test_folder_without_input(tmp_path):
    (tmp_path / "notes.pdf").write_bytes(b"%PDF")
    with pytest.raises(InputError, match="folder has no readable input"):
        read_papers([tmp_path])


def test_empty_file(tmp_path):
    f = write(tmp_path / "empty.txt", "\n  \n")
    with pytest.raises(InputError, match=r"empty\.txt: empty file; put a header line"):
        read_papers([f])


def test_header_and_no_abstracts(tmp_path):
    f = write(tmp_path / "h.txt", "ICML 2026 Papers\n\n")
    with pytest.raises(InputError, match=r"h\.txt: a header and no abstracts"):
        read_papers([f])


def test_header_without_venue_keeps_papers_and_warns(tmp_path):
    f = write(tmp_path / "h.txt", f"论文列表\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert len(report.papers) == 1 and report.papers[0].venue is None
    assert [w.reason for w in report.warnings] == ["header_without_venue_or_year"]
    assert "names no venue and year; its papers are kept with venue and year unknown" in str(report.warnings[0])


def test_binary_file_is_refused(tmp_path):
    f = write(tmp_path / "x.txt", bytes(range(256)) * 4)
    with pytest.raises(InputError, match=r"x\.txt: binary file, not text"):
        read_papers([f])


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "latin-1"])
def test_encodings_read_the_same_text(tmp_path, encoding):
    text = f"ICML 2026 Papers\r\n\r\nCafé\u00a0models\tare naïve. {ABSTRACT_A}\r\n"
    f = write(tmp_path / "enc.txt", text, encoding)
    report = read_papers([f])
    assert report.papers[0].abstract == f"Café models are naïve. {ABSTRACT_A}"
    assert report.papers[0].venue == "ICML"
    assert [w.reason for w in report.warnings] == (["decoded_as_latin1"] if encoding == "latin-1" else [])


def test_zero_width_characters_do_not_change_the_paper(tmp_path):
    hidden = ABSTRACT_A.replace("Graph", "Gr\u200baph")
    f = write(tmp_path / "z.txt", f"ICML 2026\n\n{ABSTRACT_A}\n\n{hidden}\n")
    report = read_papers([f])
    assert len(report.papers) == 1 and report.duplicates_merged == 1


def test_duplicates_in_one_file_and_across_files_keep_both_sources(tmp_path):
    a = write(tmp_path / "a.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n\n{ABSTRACT_A}\n")
    b = write(tmp_path / "b.txt", f"ICLR 2026 Papers\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    report = read_papers([a, b])
    assert len(report.papers) == 2 and report.duplicates_merged == 2 and report.records_read == 4
    paper = report.papers[0]
    assert [(s.file.rsplit("/", 1)[-1], s.paragraph) for s in paper.sources] == [("a.txt", 2), ("a.txt", 3), ("b.txt", 2)]
    assert sum(w.reason == "duplicate_merged" for w in report.warnings) == 2


def test_jsonl_with_fields_and_a_malformed_row(tmp_path):
    rows = [
        json.dumps({"id": "W1", "title": "GNNs", "abstract": ABSTRACT_A, "venue": "KDD", "year": 2024}),
        "{not json",
        json.dumps({"title": "no abstract"}),
        json.dumps({"abstract": ABSTRACT_B, "year": "2023"}),
    ]
    f = write(tmp_path / "x.jsonl", "\n".join(rows) + "\n")
    report = read_papers([f])
    assert [(p.source_id, p.title, p.venue, p.year) for p in report.papers] == [("W1", "GNNs", "KDD", 2024), (None, None, None, 2023)]
    assert report.papers[0].document.startswith("GNNs. Graph neural")
    notes = [str(w) for w in report.warnings]
    assert notes[0].endswith("x.jsonl, row 2: malformed JSON (Expecting property name enclosed in double quotes, column 2); row skipped, fix it and rebuild")
    assert notes[1].endswith("x.jsonl, row 3: no abstract (the 'abstract' field is missing or empty); row skipped")
    assert report.skipped == {"malformed_row": 1, "row_without_abstract": 1}


def test_csv_with_a_short_row(tmp_path):
    f = write(tmp_path / "x.csv", f'id,title,abstract\n1,T1,"{ABSTRACT_A}"\n2,only two\n3,T3,"{ABSTRACT_B}"\n')
    report = read_papers([f])
    assert [p.source_id for p in report.papers] == ["1", "3"]
    assert str(report.warnings[0]).endswith("x.csv, row 3: 2 fields where the header has 3; row skipped, fix it and rebuild")


def test_csv_without_abstract_column(tmp_path):
    f = write(tmp_path / "x.csv", "id,text\n1,hello\n")
    with pytest.raises(InputError, match=r"CSV header has no 'abstract' column \(found: id, text\)"):
        read_papers([f])


def test_file_without_header_keeps_papers_and_warns(tmp_path):
    f = write(tmp_path / "x.txt", f"{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    report = read_papers([f])
    assert len(report.papers) == 2 and [w.reason for w in report.warnings] == ["no_header"]
