import json
import os

import pytest

from kg.errors import InputError
from kg.text.sources import paper_id, parse_header, read_papers

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
        ("Actes de NeurIPS 2025", ("NeurIPS", 2025)),
        ("2024年 ICLR 論文", ("ICLR", 2024)),
        ("Interspeech 2024 accepted papers", ("Interspeech", 2024)),
        ("Papers from Interspeech 2024", ("Interspeech", 2024)),
        ("Some Papers I Liked", (None, None)),
    ],
)
def test_header_names_venue_and_year_in_any_language(header, expected):
    assert parse_header(header) == expected


def test_seed_files_give_38_papers_with_venue_year_and_sources(monkeypatch):
    from support import ROOT

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
    assert notes[1].endswith("x.jsonl, row 3: no abstract (the 'abstract' field is missing); row skipped")
    assert report.skipped == {"malformed_row": 1, "row_without_abstract": 1}


def test_csv_with_a_short_row(tmp_path):
    f = write(tmp_path / "x.csv", f'id,title,abstract\n1,T1,"{ABSTRACT_A}"\n2,only two\n3,T3,"{ABSTRACT_B}"\n')
    report = read_papers([f])
    assert [p.source_id for p in report.papers] == ["1", "3"]
    assert str(report.warnings[0]).endswith("x.csv, row 3: 2 fields where the header has 3; row skipped, fix it and rebuild")


def test_a_csv_field_past_the_limit_is_refused_while_reading_whatever_the_process_limit(tmp_path):
    """Issue 43: the csv module's field limit is the process's; a library that lifts it (scipy's ARFF reader
    does) let a field of any length be read whole. kg sets its own while reading, and puts the other back."""
    import csv

    f = write(tmp_path / "x.csv", f'id,abstract\n1,"{"long words " * 20_000}"\n2,"{ABSTRACT_A}"\n')
    before = csv.field_size_limit(1 << 40)
    try:
        report = read_papers([f])
        assert csv.field_size_limit() == 1 << 40
    finally:
        csv.field_size_limit(before)
    assert [p.source_id for p in report.papers] == ["2"] and report.skipped == {"malformed_row": 1}
    assert str(report.warnings[0]).endswith("x.csv, row 2: malformed CSV (field larger than field limit (131072)); row skipped, "
                                            "fix it and rebuild")


def test_csv_without_abstract_column(tmp_path):
    f = write(tmp_path / "x.csv", "id,text\n1,hello\n")
    with pytest.raises(InputError, match=r"CSV header has no 'abstract' column \(found: id, text\)"):
        read_papers([f])


def test_file_without_header_keeps_papers_and_warns(tmp_path):
    f = write(tmp_path / "x.txt", f"{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    report = read_papers([f])
    assert len(report.papers) == 2 and [w.reason for w in report.warnings] == ["no_header"]


def said(report, folder):
    """The report's warnings as the command line prints them, without *folder*."""
    return [str(w).replace(f"{folder}/", "") for w in report.warnings]


def long_abstract(i, words=40):
    """A distinct abstract of *words* words on one line."""
    return f"Abstract number {i} studies " + " ".join(f"topic{i}x{k}" for k in range(words - 5)) + " carefully."


# 1. a UTF-8 byte-order mark before bytes that are not UTF-8


def test_utf8_bom_then_invalid_utf8_is_read_as_windows_1252(tmp_path):
    f = write(tmp_path / "a.txt", b"\xef\xbb\xbfICML 2026 Papers\n\nCaf\xe9 models.\n")
    report = read_papers([f])
    assert [(p.abstract, p.venue, p.year) for p in report.papers] == [("Café models.", "ICML", 2026)]
    assert [w.reason for w in report.warnings] == ["decoded_as_latin1"]
    assert str(report.warnings[0]).endswith(
        "a.txt: not UTF-8 (byte 24) despite its UTF-8 byte-order mark; read as Windows-1252/Latin-1, re-save it as UTF-8 to be sure"
    )


# 2. one abstract per line


def test_one_abstract_per_line_is_read_as_one_paper_per_line(tmp_path):
    lines = [long_abstract(i) for i in range(4)]
    f = write(tmp_path / "l.txt", "ICML 2026 Papers\n\n" + "\n".join(lines) + "\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == lines
    assert [(s.paragraph, s.line) for p in report.papers for s in p.sources] == [(2, 3), (2, 4), (2, 5), (2, 6)]
    assert {p.venue for p in report.papers} == {"ICML"}
    assert [w.reason for w in report.warnings] == ["one_abstract_per_line"]
    assert str(report.warnings[0]).endswith(
        "l.txt, paragraph 2 (line 3): 4 lines of 30 words or more and no blank line between them;"
        " read as 4 abstracts, one per line (put a blank line between abstracts to be sure)"
    )


def test_header_directly_above_abstracts_one_per_line(tmp_path):
    lines = [long_abstract(i) for i in range(3)]
    f = write(tmp_path / "l.txt", "ICLR 2026 论文列表\n" + "\n".join(lines) + "\n")
    report = read_papers([f])
    assert [(p.abstract, p.venue, p.year) for p in report.papers] == [(line, "ICLR", 2026) for line in lines]
    assert [s.line for p in report.papers for s in p.sources] == [2, 3, 4]
    assert [w.reason for w in report.warnings] == ["one_abstract_per_line"]


def test_hard_wrapped_paragraphs_are_still_joined(tmp_path):
    words = long_abstract(0, words=60).split()
    wrapped = "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12))
    f = write(tmp_path / "w.txt", f"ICML 2026 Papers\n\n{wrapped}\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [" ".join(words), ABSTRACT_A] and report.warnings == ()


def test_one_short_line_keeps_a_paragraph_joined(tmp_path):
    text = "\n".join([long_abstract(0), long_abstract(1), "A last line of a few words."])
    f = write(tmp_path / "w.txt", f"ICML 2026 Papers\n\n{text}\n")
    assert len(read_papers([f]).papers) == 1


# 3. what a folder is read for


def make_output_folder(folder, manifest):
    (folder / "store").mkdir(parents=True)
    (folder / "store" / "CURRENT").write_text("MANIFEST-000001\n")
    (folder / "graph.nt").write_text("")
    (folder / "keyphrases.jsonl").write_text(json.dumps({"id": "p1", "keyphrases": []}) + "\n")
    if manifest:
        (folder / ".cache").mkdir()
        (folder / ".cache" / "manifest.json").write_text("{}")


def test_folder_reads_only_abstract_lists_and_names_what_it_skips(tmp_path):
    write(tmp_path / "a.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "b.jsonl", json.dumps({"abstract": ABSTRACT_B}) + "\n")
    write(tmp_path / "LICENSE", "MIT License\n\nPermission is hereby granted, free of charge.\n")
    write(tmp_path / "notes.md", "# Notes\n\nTo read.\n")
    write(tmp_path / ".hidden.txt", f"ICML 2026\n\n{ABSTRACT_B} hidden\n")
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".git" / "description.txt", "Unnamed repository.\n")
    make_output_folder(tmp_path / "out", manifest=True)
    make_output_folder(tmp_path / "sub" / "old", manifest=False)  # a build that stopped before its manifest
    report = read_papers([tmp_path])
    assert [f.rsplit("/", 2)[-2:] for f in report.files] == [[tmp_path.name, "a.txt"], ["sub", "b.jsonl"]]
    assert [p.venue for p in report.papers] == ["ICML", None]
    assert [w.reason for w in report.warnings] == ["skipped_files"]
    assert str(report.warnings[0]).endswith(
        ": skipped 4 files and folders that are not abstract lists: LICENSE, notes.md, out/ (kg outputs), sub/old/ (kg outputs)"
        " (a folder is read for its .txt, .jsonl, .ndjson, .csv, .tsv, .json, .bib, .bibtex and .ris files; name a file to read it whatever its name)"
    )


def test_a_file_named_on_its_own_is_read_whatever_its_suffix(tmp_path):
    f = write(tmp_path / "notes.md", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n")
    assert [p.venue for p in read_papers([f]).papers] == ["ICML"]


def test_folder_without_input_says_which_suffixes_it_reads(tmp_path):
    write(tmp_path / "LICENSE", "MIT License\n")
    with pytest.raises(InputError, match=r"^.*: folder has no readable input \(\.txt, \.jsonl, \.ndjson, \.csv, \.tsv, \.json, \.bib, \.bibtex or \.ris files\); it has LICENSE$"):
        read_papers([tmp_path])


def test_a_kg_output_folder_is_not_input(tmp_path):
    make_output_folder(tmp_path / "out", manifest=True)
    with pytest.raises(InputError, match=r"out: a folder kg build wrote its outputs in, not abstract lists"):
        read_papers([tmp_path / "out"])


# 4. a short first abstract is not a header


@pytest.mark.parametrize(
    "first",
    ["Can transformers learn graph algorithms without supervision?", "Transformers learn graph algorithms!", "We study transformers"],
)
def test_a_short_first_abstract_is_an_abstract_not_a_header(tmp_path, first):
    f = write(tmp_path / "s.txt", f"{first}\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert [(p.abstract, p.venue, p.year) for p in report.papers] == [(first, None, None), (ABSTRACT_A, None, None)]
    assert [w.reason for w in report.warnings] == ["no_header"]


def test_a_hard_wrapped_first_abstract_is_not_a_header(tmp_path):
    f = write(tmp_path / "s.txt", "Graph neural networks learn node representations by message\npassing over edges.\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == ["Graph neural networks learn node representations by message passing over edges."]


def test_header_without_a_venue_gives_venue_unknown(tmp_path):
    f = write(tmp_path / "h.txt", f"Some Papers I Liked\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert [(p.abstract, p.venue, p.year) for p in report.papers] == [(ABSTRACT_A, None, None)]
    assert [w.reason for w in report.warnings] == ["header_without_venue_or_year"]
    assert "header 'Some Papers I Liked' names no venue and year" in str(report.warnings[0])


@pytest.mark.parametrize("header, expected", [("Actes de NeurIPS 2025", ("NeurIPS", 2025)), ("2024年 ICLR 論文", ("ICLR", 2024))])
def test_headers_in_other_languages_still_name_venue_and_year(tmp_path, header, expected):
    f = write(tmp_path / "h.txt", f"{header}\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert [(p.venue, p.year) for p in report.papers] == [expected] and report.warnings == ()


# 5. paragraphs with no text


def test_paragraphs_with_no_text_are_skipped_and_said(tmp_path):
    f = write(tmp_path / "e.txt", f"ICML 2026 Papers\n\n\u200b\n\n$$x^2$$\n\n<br/><hr/>\n\n{ABSTRACT_A}\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [ABSTRACT_A] and paper_id("") not in {p.id for p in report.papers}
    assert said(report, tmp_path) == [
        "e.txt, paragraph 2 (line 3): no text left after cleaning ('\\u200b'); paragraph skipped",
        "e.txt, paragraph 3 (line 5): no text left after cleaning ('$$x^2$$'); paragraph skipped",
        "e.txt, paragraph 4 (line 7): no text left after cleaning ('<br/><hr/>'); paragraph skipped",
    ]
    assert report.skipped == {"paragraph_without_text": 3}


def test_a_file_of_paragraphs_with_no_text_has_no_abstracts(tmp_path):
    f = write(tmp_path / "e.txt", "ICML 2026 Papers\n\n$$x^2$$\n")
    with pytest.raises(InputError, match=r"no abstracts found in .*e\.txt \(1 skipped; the first: .*e\.txt, paragraph 2 "
                                         r"\(line 3\): no text left after cleaning \('\$\$x\^2\$\$'\); paragraph skipped\)$"):
        read_papers([f])


# 6. duplicates


def test_a_duplicate_under_another_venue_says_which_is_not_kept(tmp_path):
    a = write(tmp_path / "a.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n")
    b = write(tmp_path / "b.txt", f"NeurIPS 2025\n\n{ABSTRACT_A}\n")
    c = write(tmp_path / "c.txt", f"ICML 2025\n\n{ABSTRACT_A}\n")
    d = write(tmp_path / "d.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    report = read_papers([a, b, c, d])
    assert [(p.venue, p.year, len(p.sources)) for p in report.papers] == [("ICML", 2026, 4)]
    notes = [str(w) for w in report.warnings]
    assert notes[0].endswith("with both sources; the venue and year given here (NeurIPS 2025) are not kept, the paper keeps ICML 2026")
    assert notes[1].endswith("with both sources; the year given here (2025) is not kept, the paper keeps 2026")
    assert notes[2].endswith("with both sources")


def test_a_file_named_twice_is_read_once(tmp_path):
    f = write(tmp_path / "a.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n")
    report = read_papers([f, f, tmp_path / "." / "a.txt", tmp_path])
    assert len(report.files) == 1 and report.records_read == 1 and report.duplicates_merged == 0
    assert [len(p.sources) for p in report.papers] == [1]
    assert [w.reason for w in report.warnings] == ["file_given_twice"]
    assert str(report.warnings[0]).endswith("a.txt: given 4 times (by name or in a folder); read once")


# 7. JSON Lines and CSV fields that are not text


def test_fields_that_are_not_text_are_ignored_with_a_warning(tmp_path):
    rows = [
        json.dumps({"abstract": ABSTRACT_A, "venue": ["ICML", "NeurIPS"], "title": {"en": "GNNs"}, "id": 7, "year": 2026}),
        json.dumps({"abstract": 12345}),
    ]
    f = write(tmp_path / "x.jsonl", "\n".join(rows) + "\n")
    report = read_papers([f])
    assert [(p.venue, p.title, p.source_id, p.year) for p in report.papers] == [(None, None, "7", 2026)]
    assert said(report, tmp_path) == [
        "x.jsonl, row 1: title {'en': 'GNNs'} is not text; the paper is kept without it",
        "x.jsonl, row 1: venue ['ICML', 'NeurIPS'] is not text; the paper is kept without it",
        "x.jsonl, row 2: no abstract (the 'abstract' field is not text: 12345); row skipped",
    ]
    assert report.skipped == {"row_without_abstract": 1}


# 8. NUL bytes, UTF-16 without a byte-order mark, links


def test_a_nul_byte_in_text_is_refused_as_such(tmp_path):
    f = write(tmp_path / "n.txt", "ICML 2026 Papers\n\nGraph\x00 neural networks.\n")
    with pytest.raises(InputError, match=r"n\.txt: contains NUL bytes \(the first at byte 23: binary data\?\); give kg UTF-8 text"):
        read_papers([f])


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_read_with_a_warning(tmp_path, encoding):
    f = write(tmp_path / "u.txt", f"ICML 2026 Papers\n\nCafé models. {ABSTRACT_A}\n", encoding)
    report = read_papers([f])
    assert [(p.abstract, p.venue) for p in report.papers] == [(f"Café models. {ABSTRACT_A}", "ICML")]
    assert said(report, tmp_path) == [
        f"u.txt: UTF-16 without a byte-order mark; read as {encoding.upper()}, re-save it as UTF-8 to be sure"
    ]


def test_a_symbolic_link_loop_is_named_so(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(InputError, match=r"a: a symbolic link loop; make it point at an abstract-list file or folder$"):
        read_papers([tmp_path / "a"])
    os.symlink(tmp_path / "gone.txt", tmp_path / "c")
    with pytest.raises(InputError, match=r"c: a symbolic link to .*gone\.txt, which does not exist"):
        read_papers([tmp_path / "c"])


# 9. files that are not files, files over a limit, names and rows that are not text

def _fifo_reader_in_a_thread(paths):
    """read_papers(paths) in a daemon thread: what it raised (or returned), or None when it is still blocked after 20 s."""
    import threading

    outcome: list = []

    def run():
        try:
            outcome.append(read_papers(paths))
        except BaseException as e:  # noqa: BLE001 - handed to the test
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    return outcome[0] if outcome else None


@pytest.mark.parametrize("how", ["named", "in a folder", "linked"])
def test_a_fifo_is_refused_not_waited_on(tmp_path, how):
    os.mkfifo(tmp_path / "pipe.txt")
    write(tmp_path / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    if how == "linked":
        os.symlink(tmp_path / "pipe.txt", tmp_path / "link.txt")
    given = {"named": [tmp_path / "pipe.txt"], "in a folder": [tmp_path], "linked": [tmp_path / "link.txt"]}[how]
    outcome = _fifo_reader_in_a_thread(given)
    assert outcome is not None, "read_papers is blocked on the FIFO"
    if how == "in a folder":
        assert len(outcome.papers) == 1 and "pipe.txt (a named pipe (FIFO))" in str(outcome.warnings[0])
    else:
        assert isinstance(outcome, InputError)
        assert str(outcome).endswith(".txt: a named pipe (FIFO), not a regular file; give kg files of abstracts"), outcome


def test_a_link_to_a_device_and_a_socket_are_refused_before_reading(tmp_path):
    import socket

    os.symlink("/dev/zero", tmp_path / "zero.txt")
    with pytest.raises(InputError, match=r"zero\.txt: a character device, not a regular file"):
        read_papers([tmp_path / "zero.txt"])
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "s.jsonl"))
        with pytest.raises(InputError, match=r"s\.jsonl: a socket, not a regular file"):
            read_papers([tmp_path / "s.jsonl"])


def test_a_huge_sparse_file_is_refused_as_binary(tmp_path):
    f = tmp_path / "huge.txt"
    with f.open("wb") as out:
        out.truncate(1 << 30)  # 1 GiB of NUL bytes, none on disk
    with pytest.raises(InputError, match=r"huge\.txt: binary file, not text"):
        read_papers([f])


def test_a_file_over_the_size_limit_is_refused_with_the_limit(tmp_path, monkeypatch):
    import kg.text.files

    monkeypatch.setattr(kg.text.files, "MAX_FILE_BYTES", 100)
    f = write(tmp_path / "big.txt", f"ICML 2026\n\n{ABSTRACT_A}\n\n{ABSTRACT_B}\n")
    with pytest.raises(InputError, match=rf"big\.txt: {f.stat().st_size} bytes, over kg's limit of 100 per file; split it into several files$"):
        read_papers([f])


def test_a_30_mb_paragraph_is_skipped_with_the_limit_and_the_others_read(tmp_path):
    from kg.text.files import MAX_ABSTRACT_CHARS

    words = "graph neural networks learn message passing "
    long = words * (30_000_000 // len(words))
    f = write(tmp_path / "x.txt", f"ICML 2026\n\n{ABSTRACT_A}\n\n{long}\n\n{ABSTRACT_B}\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [ABSTRACT_A, ABSTRACT_B] and report.skipped == {"too_long": 1}
    assert f"x.txt, paragraph 3 (line 5): paragraph of {len(long.strip()):,} characters, over kg's limit of {MAX_ABSTRACT_CHARS:,};" \
        " paragraph skipped (put a blank line between abstracts, or check that it is an abstract)" in [str(w) for w in report.warnings]
    one_line = write(tmp_path / "one.txt", words * (30_000_000 // len(words)))
    with pytest.raises(InputError, match=r"no abstracts found in .*one\.txt \(1 skipped; the first: .*over kg's limit of 100,000"):
        read_papers([one_line])


def test_a_row_over_the_limits_is_skipped_and_the_others_read(tmp_path, monkeypatch):
    import kg.text.files

    monkeypatch.setattr(kg.text.files, "MAX_RECORD_CHARS", 30_000)
    monkeypatch.setattr(kg.text.files, "MAX_ABSTRACT_CHARS", 1_000)
    monkeypatch.setattr(kg.text.files, "MAX_FIELD_CHARS", 100)
    rows = [json.dumps({"abstract": ABSTRACT_A, "authors": ["x" * 50] * 1000}), json.dumps({"abstract": "word " * 300}),
            json.dumps({"abstract": ABSTRACT_B, "title": "t" * 200}), json.dumps({"abstract": ABSTRACT_A + " Again."})]
    f = write(tmp_path / "x.jsonl", "\n".join(rows) + "\n")
    report = read_papers([f])
    assert [(p.abstract, p.title) for p in report.papers] == [(ABSTRACT_B, None), (ABSTRACT_A + " Again.", None)]
    assert [str(w) for w in report.warnings] == [
        f"x.jsonl, row 1: row of {len(rows[0]):,} characters, over kg's limit of 30,000; row skipped (is it one JSON object a line?)",
        "x.jsonl, row 2: abstract of 1,499 characters, over kg's limit of 1,000; row skipped (check that it is an abstract)",
        "x.jsonl, row 3: title of 200 characters, over kg's limit of 100; the paper is kept without it",
    ]
    assert report.skipped == {"too_long": 2}


def test_a_row_nested_100000_deep_and_a_5000_digit_id_are_read_or_said(tmp_path):
    deep = '{"abstract": "' + ABSTRACT_A + '", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    rows = [deep, '{"abstract": "' + ABSTRACT_B + '", "id": ' + "9" * 5000 + ', "year": ' + "2" * 5000 + "}",
            '{"abstract": ' + "7" * 5000 + "}"]
    f = write(tmp_path / "x.jsonl", "\n".join(rows) + "\n")
    report = read_papers([f])
    assert [(p.abstract, p.source_id, p.year) for p in report.papers] == [(ABSTRACT_B, "9" * 5000, None)]
    warnings = [str(w) for w in report.warnings]
    assert warnings[0] == "x.jsonl, row 1: JSON nested too deep to read; row skipped, fix it and rebuild"
    assert warnings[1].startswith("x.jsonl, row 2: year 2222") and warnings[1].endswith("is not a year; the paper is kept with year unknown")
    assert warnings[2].startswith("x.jsonl, row 3: no abstract (the 'abstract' field is not text: 7777")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"])
def test_json_lines_are_split_at_line_ends_only(tmp_path, separator):
    row = json.dumps({"abstract": f"{ABSTRACT_A}{separator}{ABSTRACT_B}", "title": f"a{separator}b"}, ensure_ascii=False)
    f = write(tmp_path / "x.jsonl", row + "\r\n" + json.dumps({"abstract": ABSTRACT_B + " Twice."}) + "\n")
    report = read_papers([f])
    assert len(report.papers) == 2 and report.warnings == (), [str(w) for w in report.warnings]
    assert report.papers[0].abstract == f"{ABSTRACT_A} {ABSTRACT_B}"


def test_a_text_paragraph_is_not_split_at_a_line_separator(tmp_path):
    f = write(tmp_path / "x.txt", f"ICML 2026\n\n{ABSTRACT_A}\u2028{ABSTRACT_B}\n")
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [f"{ABSTRACT_A} {ABSTRACT_B}"] and report.warnings == ()


def test_a_file_name_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    name = os.fsdecode(b"bad\xff\xfename.txt")
    write(tmp_path / name, f"ICML 2026\n\n{ABSTRACT_A}\n")
    for given in ([tmp_path / name], [tmp_path]):
        with pytest.raises(InputError) as e:
            read_papers(given)
        assert str(e.value).endswith("bad\\xff\\xfename.txt: the file name is not valid UTF-8; rename the file"
                                     " (kg records the names of its inputs in the graph, as text)"), str(e.value)
        str(e.value).encode("utf-8")  # printable as it is


def test_odd_names_in_a_folder_are_named_on_one_line(tmp_path):
    write(tmp_path / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    write(tmp_path / "new\nline.pdf", "x")
    os.symlink(tmp_path / "loop.txt", tmp_path / "loop.txt")
    os.symlink(tmp_path / "gone.txt", tmp_path / "broken.txt")
    report = read_papers([tmp_path])
    (note,) = [str(w) for w in report.warnings]
    assert "\n" not in note and "new\\nline.pdf" in note
    assert "broken.txt (a broken symbolic link)" in note and "loop.txt (a symbolic link loop)" in note


def test_a_file_that_vanishes_or_cannot_be_read_is_one_line(tmp_path, monkeypatch):
    import kg.text.sources

    f = write(tmp_path / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    g = write(tmp_path / "b.txt", f"ICML 2026\n\n{ABSTRACT_B}\n")
    scan = kg.text.sources.find_inputs

    def scan_then_remove(paths, **options):
        found = scan(paths, **options)
        g.unlink()
        return found

    monkeypatch.setattr(kg.text.sources, "find_inputs", scan_then_remove)
    with pytest.raises(InputError, match=r"b\.txt: no longer there \(removed or renamed while kg read its folder\?\); build again$"):
        read_papers([tmp_path])
    monkeypatch.undo()
    if os.geteuid() != 0:  # root reads anything
        f.chmod(0)
        with pytest.raises(InputError, match=r"a\.txt: cannot be read \(permission denied\); check its permissions$"):
            read_papers([f])


def test_a_file_that_grows_while_read_is_read_as_it_was_opened_with_a_warning(tmp_path, monkeypatch):
    f = write(tmp_path / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    size = f.stat().st_size
    opened = os.fstat

    def fstat_then_grow(fd):  # the file grows between its size is looked at and it is read
        st = opened(fd)
        with f.open("a") as more:
            more.write(f"\n{ABSTRACT_B}\n")
        return st

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [ABSTRACT_A]
    assert [w.reason for w in report.warnings] == ["file_grew"]
    assert str(report.warnings[0]).endswith(f"a.txt: grew while kg read it; its first {size:,} bytes (its size when opened) were read,"
                                            " build again once it is complete")


def test_an_escaped_unpaired_surrogate_is_read_as_a_replacement_character_with_a_warning(tmp_path):
    row = '{"abstract": "Graph neural networks \\ud800 pass messages.", "title": "T \\udfff", "id": "\\ud83d\\ude00"}'
    f = write(tmp_path / "x.jsonl", row + "\n")
    report = read_papers([f])
    (paper,) = report.papers
    assert (paper.abstract, paper.title, paper.source_id) == ("Graph neural networks \ufffd pass messages.", "T \ufffd", "\U0001f600")
    assert [str(w) for w in report.warnings] == ["x.jsonl, row 1: the abstract and title hold an escaped unpaired surrogate"
                                                 " (such as \\ud800), which is no character; read as U+FFFD"]
    paper.abstract.encode("utf-8")


def test_json_lines_files_joined_with_their_byte_order_marks_are_read_whole(tmp_path):
    one = "\ufeff" + json.dumps({"abstract": ABSTRACT_A}) + "\n"
    two = "\ufeff" + json.dumps({"abstract": ABSTRACT_B}) + "\n"
    f = write(tmp_path / "both.jsonl", one + two)
    report = read_papers([f])
    assert [p.abstract for p in report.papers] == [ABSTRACT_A, ABSTRACT_B] and report.warnings == ()


def test_warnings_of_a_kind_past_the_kept_ones_are_counted_not_kept(tmp_path, monkeypatch):
    import kg.text.files

    monkeypatch.setattr(kg.text.files, "MAX_KEPT_WARNINGS", 50)
    f = write(tmp_path / "x.jsonl", json.dumps({"abstract": ABSTRACT_A}) + "\n" + "{}\n" * 3000 + "[1]\n")
    report = read_papers([f])
    assert [w.reason for w in report.warnings] == ["row_without_abstract"] * 50 + ["malformed_row"]
    assert report.warning_counts == {"row_without_abstract": 3000, "malformed_row": 1}
    assert str(report.warnings[49]) == "x.jsonl, row 51: no abstract (the 'abstract' field is missing); row skipped"
    assert report.skipped == {"row_without_abstract": 3000, "malformed_row": 1}


@pytest.mark.parametrize("suffix, advice", [(".jsonl", "one JSON object a line"), (".csv", "a header row with an abstract column"),
                                            (".bib", "BibTeX entries"), (".ris", "RIS records")])
def test_an_empty_file_gets_the_advice_of_its_format(tmp_path, suffix, advice):
    f = write(tmp_path / f"empty{suffix}", "\n")
    with pytest.raises(InputError, match=rf"empty\{suffix}: empty file; .*{advice}"):
        read_papers([f])


def test_rows_carry_a_doi_an_arxiv_id_and_authors_checked_as_the_other_formats_do(tmp_path):
    from kg.text.records import Author

    rows = [{"abstract": ABSTRACT_A, "doi": "https://doi.org/10.1234/ABC", "arxiv": "arXiv:2401.00001v2",
             "authors": ["Ada Lovelace", {"name": "Alan Turing", "orcid": "0000-0002-1825-0097"}, {"name": "Bad Orcid", "orcid": "0000-0002-1825-0098"},
                         {"orcid": "0000-0002-1825-0097"}, 42]},
            {"abstract": ABSTRACT_B, "doi": "not a doi", "arxiv": "1234", "authors": "Jane Doe; John Smith"},
            {"abstract": ABSTRACT_B + " Again.", "authors": {"name": "x"}}]
    f = write(tmp_path / "x.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    c = write(tmp_path / "x.csv", 'abstract,doi,arxiv,authors\n"Rows of CSV carry authors.",10.5555/X1,hep-th/9603067v1,"Doe, Jane; ;Smith, J."\n')
    report = read_papers([f, c])
    a, b, again, csv_paper = report.papers
    assert (a.doi, a.arxiv) == ("10.1234/abc", "2401.00001")
    assert a.authors == (Author("Ada Lovelace"), Author("Alan Turing", "0000-0002-1825-0097"), Author("Bad Orcid"))
    assert (b.doi, b.arxiv, b.authors) == (None, None, (Author("Jane Doe"), Author("John Smith")))
    assert again.authors == ()
    assert (csv_paper.doi, csv_paper.arxiv, csv_paper.authors) == ("10.5555/x1", "hep-th/9603067", (Author("Doe, Jane"), Author("Smith, J.")))
    assert [str(w) for w in report.warnings] == [
        "x.jsonl, row 1: ORCID of Bad Orcid: '0000-0002-1825-0098' is not an ORCID iD (its check digit is wrong); the author is kept without it",
        "x.jsonl, row 1: author {'orcid': '0000-0002-1825-0097'} is not a name (text, or an object with a 'name'); the paper is kept without this author",
        "x.jsonl, row 1: author 42 is not a name (text, or an object with a 'name'); the paper is kept without this author",
        "x.jsonl, row 2: DOI 'not a doi' is not a DOI (10.<registrant>/<suffix>); the paper is kept without it",
        "x.jsonl, row 2: arXiv id '1234' is not an arXiv id (such as 2401.00001 or hep-th/9608091); the paper is kept without it",
        "x.jsonl, row 3: authors {'name': 'x'} are not a list of names; the paper is kept without them",
    ]


# --------------------------------------------------------------------------- one paper per DOI or arXiv id

SAME_BIB = """@article{same1, title = {A {LSTM} Study}, doi = {10.5555/same.1}, year = 2020,
  abstract = {We study {LSTM} networks for {S}peech recognition and show gains on two benchmarks.}}
"""
SAME_RIS = """TY  - JOUR
TI  - A LSTM Study
DO  - https://doi.org/10.5555/SAME.1
AB  - We study LSTM networks for Speech recognition and show gains on two benchmarks.
PY  - 2020
ER  - 
"""


def test_one_paper_exported_as_bibtex_and_ris_is_one_paper(tmp_path):
    """The same DOI and the same abstract up to BibTeX's braces: one paper with both sources."""
    bib, ris = write(tmp_path / "a.bib", SAME_BIB), write(tmp_path / "b.ris", SAME_RIS)
    report = read_papers([bib, ris])
    assert len(report.papers) == 1 and report.duplicates_merged == 1 and report.conflicts == ()
    (paper,) = report.papers
    assert paper.doi == "10.5555/same.1" and [s.file.rsplit("/", 1)[-1] for s in paper.sources] == ["a.bib", "b.ris"]
    assert [w.reason for w in report.warnings] == ["duplicate_merged"]


def test_one_doi_on_two_different_abstracts_is_reported_not_resolved(tmp_path):
    """Both records are kept (neither abstract is lost); the conflict is a warning and in the report."""
    other = SAME_RIS.replace("We study LSTM networks for Speech recognition", "Protein folding with transformers")
    bib, ris = write(tmp_path / "a.bib", SAME_BIB), write(tmp_path / "b.ris", other)
    report = read_papers([bib, ris])
    assert len(report.papers) == 2 and report.duplicates_merged == 0
    (conflict,) = report.conflicts
    assert conflict.identifier == "doi:10.5555/same.1" and conflict.papers == tuple(p.id for p in report.papers)
    assert conflict.sources == ("a.bib, line 1", "b.ris, line 1")
    (warning,) = [w for w in report.warnings if w.reason == "identifier_conflict"]
    assert "DOI 10.5555/same.1 is also that of" in str(warning) and "both are kept" in str(warning)


def test_one_arxiv_id_with_different_versions_of_an_abstract_is_a_conflict(tmp_path):
    rows = [{"abstract": ABSTRACT_A, "arxiv": "2101.00001v1"}, {"abstract": ABSTRACT_B, "arxiv": "arXiv:2101.00001v2"}]
    f = write(tmp_path / "a.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    report = read_papers([f])
    assert len(report.papers) == 2 and [c.identifier for c in report.conflicts] == ["arxiv:2101.00001"]


def test_the_same_abstract_up_to_case_and_punctuation_is_one_paper(tmp_path):
    f = write(tmp_path / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n\n{ABSTRACT_A.upper().replace(' ', ' -- ')}\n")
    report = read_papers([f])
    assert len(report.papers) == 1 and report.duplicates_merged == 1
    assert "same abstract (up to case, punctuation and markup)" in str(report.warnings[0])


def test_a_folder_is_read_for_every_suffix_a_named_file_is_read_by(tmp_path):
    """One list of suffixes: a folder of .bibtex files was 'no readable input' though one named .bibtex file was read."""
    folder = tmp_path / "library"
    folder.mkdir()
    write(folder / "refs.bibtex", SAME_BIB)
    report = read_papers([folder])
    assert [p.doi for p in report.papers] == ["10.5555/same.1"] and report.warnings == ()


# 10. symbolic links in a folder: nothing outside the folders given is read unless --follow-links

def _folder_with_links(tmp_path):
    """A folder *in* with a.txt, a link to a file outside it, a link to a folder outside it, a
    link in a subfolder to a.txt (inside) and a link to its own parent (a loop)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside / "secret.txt", f"ICML 2026\n\n{ABSTRACT_B} secret\n")
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    write(folder / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    os.symlink(outside / "secret.txt", folder / "leak.txt")
    os.symlink(outside, folder / "elsewhere")
    os.symlink(folder / "a.txt", folder / "sub" / "same.txt")
    os.symlink(folder, folder / "sub" / "loop")
    return folder


def test_links_in_a_folder_are_skipped_with_a_warning_not_read(tmp_path):
    report = read_papers([_folder_with_links(tmp_path)])
    assert [p.abstract for p in report.papers] == [ABSTRACT_A]
    assert [w.reason for w in report.warnings] == ["skipped_links"]
    assert str(report.warnings[0]).endswith(
        ": skipped 4 links: elsewhere/ (a link), leak.txt (a link), sub/loop/ (a link), sub/same.txt (a link)"
        " (links are not followed, so that nothing outside the folders given is read; pass --follow-links to read what they point at)")


def test_a_folder_of_links_only_is_refused_naming_them_and_the_flag(tmp_path):
    (tmp_path / "in").mkdir()
    os.symlink("/etc/passwd", tmp_path / "in" / "leak.txt")
    with pytest.raises(InputError, match=r"folder has no readable input .*; it has leak\.txt \(a link\) \(.*pass --follow-links"):
        read_papers([tmp_path / "in"])


def test_with_follow_links_links_are_read_once_and_a_loop_ends(tmp_path):
    report = read_papers([_folder_with_links(tmp_path)], follow_links=True)
    assert sorted(p.abstract for p in report.papers) == sorted([ABSTRACT_A, f"{ABSTRACT_B} secret"])
    assert "skipped_links" not in {w.reason for w in report.warnings}


def test_a_link_named_on_its_own_is_read(tmp_path):
    folder = _folder_with_links(tmp_path)
    assert [p.abstract for p in read_papers([folder / "leak.txt"]).papers] == [f"{ABSTRACT_B} secret"]


def test_a_file_that_becomes_a_link_after_the_folder_is_listed_is_not_followed(tmp_path, monkeypatch):
    import kg.text.sources

    folder = tmp_path / "in"
    folder.mkdir()
    write(folder / "a.txt", f"ICML 2026\n\n{ABSTRACT_A}\n")
    scan = kg.text.sources.find_inputs

    def scan_then_link(paths, **options):
        found = scan(paths, **options)
        (folder / "a.txt").unlink()
        os.symlink("/etc/passwd", folder / "a.txt")
        return found

    monkeypatch.setattr(kg.text.sources, "find_inputs", scan_then_link)
    with pytest.raises(InputError, match=r"a\.txt: became a symbolic link while kg read its folder"):
        read_papers([folder])


# 10. The authors' keywords


def test_keywords_of_jsonl_json_and_csv_rows(tmp_path):
    jsonl = write(tmp_path / "x.jsonl", json.dumps({"abstract": ABSTRACT_A, "keywords": ["GNN", " message  passing ", "gnn", "",
                                                                                         "graphs, nodes"]}) + "\n")
    as_json = write(tmp_path / "y.json", json.dumps([{"abstract": ABSTRACT_B, "Keywords": "optimizers; large language models, LLMs"}]))
    csv = write(tmp_path / "z.csv", 'abstract,keywords\n"Third abstract, on graphs.","graphs,  nodes , edges,"\n'
                                    '"Fourth abstract, without keywords.",\n')
    papers = read_papers([jsonl, as_json, csv]).papers
    assert [p.keywords for p in papers] == [
        ("GNN", "message passing", "graphs, nodes"),  # a list: each item one keyword
        ("optimizers", "large language models, LLMs"),  # a text with ';': split there only
        ("graphs", "nodes", "edges"),  # a text without ';': split at ','
        (),
    ]


@pytest.mark.parametrize("key", ["keyword", "author_keywords", "authorKeywords", "DE", "Author Keywords", "KEYWORDS"])
def test_keywords_go_by_the_names_other_tools_give_them(tmp_path, key):
    f = write(tmp_path / "x.jsonl", json.dumps({"abstract": ABSTRACT_A, key: "GNN; graphs"}) + "\n")
    assert read_papers([f]).papers[0].keywords == ("GNN", "graphs")
    f = write(tmp_path / "x.csv", f'abstract,{key}\n"{ABSTRACT_A}",GNN; graphs\n')
    assert read_papers([f]).papers[0].keywords == ("GNN", "graphs")


def test_keywords_of_the_wrong_type_are_ignored_with_a_warning(tmp_path):
    rows = [
        json.dumps({"abstract": ABSTRACT_A, "keywords": 42}),
        json.dumps({"abstract": ABSTRACT_B, "keywords": {"en": "GNN"}}),
        json.dumps({"abstract": "A third abstract.", "keywords": ["GNN", 7, None, {"name": "x"}, "graphs"]}),
    ]
    report = read_papers([write(tmp_path / "x.jsonl", "\n".join(rows) + "\n")])
    assert [p.keywords for p in report.papers] == [(), (), ("GNN", "graphs")]
    assert said(report, tmp_path) == [
        "x.jsonl, row 1: keywords 42 are not a list of keywords or a text of them; the paper is kept without them",
        "x.jsonl, row 2: keywords {'en': 'GNN'} are not a list of keywords or a text of them; the paper is kept without them",
        "x.jsonl, row 3: keyword 7 is not text; the paper is kept without it",
        "x.jsonl, row 3: keyword None is not text; the paper is kept without it",
        "x.jsonl, row 3: keyword {'name': 'x'} is not text; the paper is kept without it",
    ]
    assert {w.reason for w in report.warnings} == {"bad_field"} and report.skipped == {}


def test_a_keyword_over_the_field_limit_is_dropped_with_a_warning(tmp_path):
    row = {"abstract": ABSTRACT_A, "keywords": ["GNN", "x" * 10_001]}
    report = read_papers([write(tmp_path / "x.jsonl", json.dumps(row) + "\n")])
    assert report.papers[0].keywords == ("GNN",)
    assert [w.reason for w in report.warnings] == ["bad_field"]


def test_duplicates_merged_keep_the_union_of_their_keywords_in_order_of_first_appearance(tmp_path):
    a = write(tmp_path / "a.jsonl", json.dumps({"abstract": ABSTRACT_A, "keywords": ["GNN", "graphs"]}) + "\n"
              + json.dumps({"abstract": ABSTRACT_A}) + "\n")
    b = write(tmp_path / "b.bib", "@article{k, abstract = {" + ABSTRACT_A.upper() + "}, keywords = {message passing, gnn, Graphs,"
              " nodes}}\n")
    c = write(tmp_path / "c.txt", f"ICML 2026 Papers\n\n{ABSTRACT_A}\n")
    report = read_papers([a, b, c])
    assert report.duplicates_merged == 3 and len(report.papers) == 1
    assert report.papers[0].keywords == ("GNN", "graphs", "message passing", "nodes")
    first_without = read_papers([c, a]).papers[0]
    assert first_without.keywords == ("GNN", "graphs")  # the first copy had none: the later ones give them
