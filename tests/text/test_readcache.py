"""The read cache (kg.text.readcache): a file read before is not parsed again, and the report is
the same as a fresh read's, whatever the cache holds."""

import hashlib
import json
import pickle

import pytest

import kg.text.files
import kg.text.sources
from kg.text.readcache import _MAGIC, READ_CACHE, ParsedFile, ReadCache
from kg.text.sources import read_papers

ROWS = [
    {"abstract": "Graph neural networks pass messages along the edges of molecules.", "title": "GNNs",
     "authors": [{"name": "Ada Lovelace", "orcid": "0000-0002-1825-0097"}], "keywords": "graphs; molecules"},
    {"abstract": "Graph neural networks pass messages along the edges of molecules!"},  # merged: a warning
    {"title": "no abstract"},  # skipped: a warning
    {"abstract": "Protein folding is predicted with transformers from $\\alpha$-helix data [12]."},
]


def _corpus(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (src / "list.txt").write_text("ICML 2026 Papers\n\nDiffusion models generate images \\cite{ho} from noise.\n\n"
                                  "Sparse autoencoders find features in language models.\n")
    (src / "table.csv").write_text("abstract,year\nDiffusion models generate images from noise.,20x6\n")
    return src


def _entries(cache_folder):
    return sorted(p.name for p in (cache_folder / READ_CACHE).iterdir())


def _no_parsing(monkeypatch):
    def parse(*args, **kwargs):
        raise AssertionError("a file in the read cache was parsed again")

    monkeypatch.setattr(kg.text.sources, "_parse", parse)


def test_a_cache_hit_gives_the_report_of_a_fresh_read_without_parsing(tmp_path, monkeypatch):
    src, folder = _corpus(tmp_path), tmp_path / "cache"
    fresh = read_papers([src])
    assert fresh.skipped == {"row_without_abstract": 1} and fresh.duplicates_merged == 2
    assert {"duplicate_merged", "row_without_abstract", "bad_year"} <= set(fresh.warning_counts)
    assert read_papers([src], cache=ReadCache(folder)) == fresh  # a miss: read, and kept
    assert len(_entries(folder)) == 3
    _no_parsing(monkeypatch)
    hit = read_papers([src], cache=ReadCache(folder))
    assert hit == fresh  # papers (text, ids, urls, sources, authors), warnings, counts, digests, skipped
    assert (hit.warnings, hit.warning_counts, hit.digests, hit.records_read) == (
        fresh.warnings, fresh.warning_counts, fresh.digests, fresh.records_read)


def test_warnings_kept_and_counted_beyond_the_limit_are_the_same_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(kg.text.files, "MAX_KEPT_WARNINGS", 2)
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps({"title": f"row {i}"}) + "\n" for i in range(5)) + json.dumps({"abstract": "A GNN."}) + "\n")
    fresh = read_papers([src])
    assert fresh.warning_counts["row_without_abstract"] == 5 and len(fresh.warnings) == 2
    read_papers([src], cache=ReadCache(tmp_path / "cache"))
    _no_parsing(monkeypatch)
    assert read_papers([src], cache=ReadCache(tmp_path / "cache")) == fresh


def test_a_file_edited_in_place_is_read_again(tmp_path):
    src, folder = _corpus(tmp_path), tmp_path / "cache"
    read_papers([src], cache=ReadCache(folder))
    before = _entries(folder)
    rows = src / "rows.jsonl"
    rows.write_text(rows.read_text().replace("Protein folding", "RNA folding"))
    again = read_papers([src], cache=ReadCache(folder))
    assert again == read_papers([src])
    assert any(p.abstract.startswith("RNA folding") for p in again.papers)
    assert not any(p.abstract.startswith("Protein folding") for p in again.papers)
    after = _entries(folder)
    assert len(after) == 3 and len(set(after) - set(before)) == 1  # the old entry of rows.jsonl dropped


def test_a_file_under_another_name_is_read_again(tmp_path):
    # Warnings and sources name the file: its entry is keyed by that name too.
    src, folder = _corpus(tmp_path), tmp_path / "cache"
    read_papers([src], cache=ReadCache(folder))
    (src / "rows.jsonl").rename(src / "renamed.jsonl")
    again = read_papers([src], cache=ReadCache(folder))
    assert again == read_papers([src])
    assert {s.file for p in again.papers for s in p.sources} >= {"src/renamed.jsonl"}


def _put_entry(path, key: bytes, body: bytes) -> None:
    path.write_bytes(_MAGIC + key + b"\n" + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)


class _Runs:
    """A pickle that would call ``open(<file>, "w")`` if an entry's loading called what it names."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return open, (self.target, "w")


@pytest.mark.parametrize("damage", ["empty", "garbage", "cut short", "a byte changed", "another key", "not a ParsedFile",
                                    "wrong items", "runs code"])
def test_a_damaged_entry_is_read_again_and_replaced(tmp_path, monkeypatch, damage):
    src, folder = _corpus(tmp_path), tmp_path / "cache"
    fresh = read_papers([src])
    read_papers([src], cache=ReadCache(folder))
    entries = sorted((folder / READ_CACHE).iterdir(), key=lambda p: p.stat().st_size)
    entry = entries[-1]  # the largest: rows.jsonl's
    data = entry.read_bytes()
    key = data[len(_MAGIC):data.index(b"\n", len(_MAGIC))]
    ran = tmp_path / "ran"
    if damage == "empty":
        entry.write_bytes(b"")
    elif damage == "garbage":
        entry.write_bytes(b"\x80\x05not a pickle" * 100)
    elif damage == "cut short":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "a byte changed":  # still a pickle, of another abstract: its digest tells
        entry.write_bytes(data.replace(b"Protein folding", b"Protean folding"))
    elif damage == "another key":
        entry.write_bytes(data.replace(b"rows.jsonl", b"rows.jsonX", 1))
    elif damage == "not a ParsedFile":
        _put_entry(entry, key, pickle.dumps({"items": []}))
    elif damage == "wrong items":
        _put_entry(entry, key, pickle.dumps(ParsedFile(("not a record",), (), {}, {})))
    else:
        _put_entry(entry, key, pickle.dumps(_Runs(ran)))
    again = read_papers([src], cache=ReadCache(folder))
    assert again == fresh
    assert not ran.exists()  # nothing an entry names but kg.text's classes is ever called
    _no_parsing(monkeypatch)  # the entry was replaced by a good one
    assert read_papers([src], cache=ReadCache(folder)) == fresh


def test_the_entries_of_files_no_longer_given_are_dropped(tmp_path, monkeypatch):
    src, folder = _corpus(tmp_path), tmp_path / "cache"
    read_papers([src], cache=ReadCache(folder))
    stray = folder / READ_CACHE / ".left-by-a-killed-build.tmp"
    stray.write_bytes(b"x")
    (src / "table.csv").unlink()
    (src / "list.txt").unlink()
    fewer = read_papers([src], cache=ReadCache(folder))
    assert len(_entries(folder)) == 1 and not stray.exists()
    _no_parsing(monkeypatch)  # the one left is rows.jsonl's
    assert read_papers([src], cache=ReadCache(folder)) == fewer


def test_without_a_cache_nothing_is_written(tmp_path):
    src = _corpus(tmp_path)
    read_papers([src])
    assert not any(p.name == READ_CACHE for p in tmp_path.rglob("*"))


def test_a_cache_that_cannot_be_written_is_an_output_error(tmp_path):
    from kg.errors import OutputError

    src = _corpus(tmp_path)
    (tmp_path / "cache").write_text("a file where the cache folder goes")
    with pytest.raises(OutputError, match="cannot write the read cache"):
        read_papers([src], cache=ReadCache(tmp_path / "cache"))


def test_an_entry_is_written_and_read_without_its_whole_body_in_memory(tmp_path):
    """The pickle goes to the entry's file as it is made, and comes back from it, rather than as one
    bytes object (then one more copy to read it from): for this 9.4 MB entry, writing took 12.5 MB
    beside the records and reading 21.0 MB beside them before; 3.1 and 2.1 MB now."""
    import gc
    import tracemalloc

    sentence = "We study sampling scheme {} for graph neural networks on molecules, citations and road networks. "
    rows = [{"id": f"p{i}", "title": f"Paper {i} on sampling", "abstract": "".join(sentence.format(i * 10 + k) for k in range(15))}
            for i in range(3_000)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    parsed = kg.text.sources._parse(data, "rows.jsonl", ".jsonl")
    cache = ReadCache(tmp_path)
    gc.collect()
    tracemalloc.start()
    try:
        cache.put("the key", parsed)
        put_peak = tracemalloc.get_traced_memory()[1]
        size = sum(p.stat().st_size for p in (tmp_path / READ_CACHE).iterdir())
        del parsed
        gc.collect()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        got = cache.get("the key")
        held, get_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 8_000_000 and len(got.items) == 3_000
    assert put_peak < 0.6 * size, (put_peak, size)
    assert get_peak - held < 0.5 * size and held - before > size, (get_peak, held, size)
    assert got == kg.text.sources._parse(data, "rows.jsonl", ".jsonl")
