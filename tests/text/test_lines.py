"""JSON Lines read a row at a time (`kg.text.files.Lines`): the rows, warnings and records the whole
decoded text gives, without that text (4 bytes a character once one character is past U+FFFF)."""

from __future__ import annotations

import codecs
import json
import tracemalloc

import pytest

from kg.text.files import Lines, decode, json_rows, split_lines
from kg.text.sources import read_papers

TEXTS = [
    "", "\n", "a", "a\n", "a\n\n", "\n\na", "a\r\nb\rc\nd", "a\r\n\r\nb\r", "{\"x\": \"\u2028 \u2029 \x85 \x1c\"}\n{}",
    "\ufeff{\"a\": 1}\n\ufeff{\"b\": 2}\n", "caf\u00e9\n\U0001d53d\n\u4e2d\u6587\r\n", "x" * 5000 + "\n" + "y\r" * 3,
]


@pytest.mark.parametrize("text", TEXTS)
def test_lines_are_split_lines_of_the_decoded_text_each_time_they_are_read(text):
    lines = Lines(text.encode("utf-8"))
    assert list(lines) == split_lines(text)
    assert list(lines) == split_lines(text)  # read again, the same


def test_json_rows_read_lines_as_they_read_the_text():
    rows = ['{"abstract": "one"}', "", "not json", '{"abstract": "\\ud800 lone"}', "\ufeff[1, 2]", '{"abstract": "\U0001f600"}']
    text = "\r\n".join(rows) + "\n"
    got = []
    for given in (text, Lines(text.encode("utf-8"))):
        notes, skipped = [], {}
        got.append((list(json_rows("f.jsonl", given, notes, skipped)), notes, skipped))
    assert got[0] == got[1]
    assert [row for row, _ in got[0][0]] == [1, 4, 5, 6] and got[0][2] == {"malformed_row": 1}


def test_decode_gives_lines_for_utf8_alone():
    assert isinstance(decode(b'{"a": 1}\n', "f.jsonl", lines=True)[0], Lines)
    text, notes = decode(codecs.BOM_UTF8 + '{"a": "\U0001d53d"}\n'.encode(), "f.jsonl", lines=True)
    assert isinstance(text, Lines) and list(text) == ['{"a": "\U0001d53d"}'] and notes == []
    assert decode(b'{"a": 1}\n', "f.jsonl") == ('{"a": 1}\n', [])  # without lines=True: the text, as before
    latin = decode(b'{"a": "caf\xe9"}\n', "f.jsonl", lines=True)  # not UTF-8: the whole text, with its warning
    assert latin[0] == '{"a": "caf\u00e9"}\n' and [n.reason for n in latin[1]] == ["decoded_as_latin1"]
    utf16 = decode(codecs.BOM_UTF16_LE + '{"a": 1}\n'.encode("utf-16-le"), "f.jsonl", lines=True)
    assert utf16[0] == '{"a": 1}\n'
    late = b'{"a": 1}\n' * 300_000 + b'{"a": "\xff"}\n'  # the one bad byte past the first chunks
    assert isinstance(decode(late, "f.jsonl", lines=True)[0], str)


def _corpus(tmp_path, name: str, odd: str):
    rows = [{"id": f"p{i}", "title": f"Paper {i}", "abstract": f"We study sampling schemes number {i} for graph neural networks"
             f" and report {odd if i == 7 else 'F'} results on molecules, citations and road networks in detail."}
            for i in range(6000)]
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _peak_reading(path) -> tuple[int, list]:
    tracemalloc.start()
    try:
        report = read_papers([path])
        return tracemalloc.get_traced_memory()[1], report.papers
    finally:
        tracemalloc.stop()


def test_one_character_past_u_ffff_does_not_widen_the_whole_file(tmp_path):
    """A row with a character past U+FFFF (𝔽) made the file's whole text 4 bytes a character (3.4 MB
    more than its ASCII twin for this 1.1 MB file); read a row at a time, the file costs what its ASCII twin does, and
    gives the same papers."""
    plain, wide = _corpus(tmp_path, "plain.jsonl", "F"), _corpus(tmp_path, "wide.jsonl", "\U0001d53d")
    (plain_peak, plain_papers), (wide_peak, wide_papers) = _peak_reading(plain), _peak_reading(wide)
    assert wide.stat().st_size > 1_000_000
    assert wide_peak - plain_peak < 0.25 * wide.stat().st_size, (plain_peak, wide_peak)
    assert [p.abstract.replace("\U0001d53d", "F") for p in wide_papers] == [p.abstract for p in plain_papers]
    assert sum("\U0001d53d" in p.abstract for p in wide_papers) == 1
