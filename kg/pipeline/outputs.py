"""A build's output files: each written to a temporary file in the output folder, hashed as it is written, and
all renamed into place together (`Staging`), with SIGINT and SIGTERM held while they are; the same files in
memory (`render_outputs`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import networkx as nx

from kg.common.fingerprints import HashingFile
from kg.errors import OutputError, OutputsWritten
from kg.extract.keyphrases import PaperKeyphrases
from kg.graph.build import concept_node, paper_node
from kg.graph.io import graph_json_view, write_graph_json
from kg.text.chars import utf8
from kg.text.sources import Paper

__all__ = ["MAP_FILES", "OUTPUT_FILES", "VIEW_FILES", "Staging", "emit_explorer", "emit_map_files", "emit_outputs", "emit_views",
           "entity_rows", "entity_stats", "keyphrase_records", "keyphrase_rows", "output_files", "render_outputs", "signals_held",
           "write_records"]

OUTPUT_FILES = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.html", "keyphrases.jsonl", "entities.jsonl", "graph.json",
                "stats.json", "graph.gexf", "map.json", "explorer.json", "explorer-search.sqlite")


def output_files(entities: bool = True) -> tuple[str, ...]:
    """The files a build writes: `OUTPUT_FILES`, without ``entities.jsonl`` when the entity stage is off."""
    return OUTPUT_FILES if entities else tuple(n for n in OUTPUT_FILES if n != "entities.jsonl")


def keyphrase_records(G: nx.Graph, papers: Sequence[Paper], found: Sequence[PaperKeyphrases], assignment) -> list[dict]:
    """One record per paper for ``keyphrases.jsonl``, in input order."""
    return list(keyphrase_rows(G, papers, found, assignment))


def keyphrase_rows(G: nx.Graph, papers: Sequence[Paper], found: Sequence[PaperKeyphrases], assignment) -> Iterator[dict]:
    """`keyphrase_records` one at a time: a paper's id, label, venue, year and sources, its authors'
    ``keywords`` (only when it has some, as on its node) and its ranked ``keyphrases``, each with its concept."""
    by_id = {k.paper_id: k for k in found}
    for p in papers:
        node = G.nodes[paper_node(p.id)]
        keyphrases = [
            {"phrase": k.phrase, "concept": concept_node(assignment[(p.id, k.phrase)]) if (p.id, k.phrase) in assignment else None,
             "score": k.score, "rank": k.rank}
            for k in by_id[p.id].keyphrases
        ]
        sources = [{"file": s.file, "paragraph": s.paragraph} if s.paragraph is not None else
                   {"file": s.file, "row": s.row} if s.row is not None else {"file": s.file, "line": s.line} for s in p.sources]
        row = {"id": p.id, "source_id": p.source_id, "label": node["label"], "venue": p.venue, "year": p.year, "sources": sources}
        if node.get("keywords"):  # the authors' keywords beside kg's keyphrases, on the papers that have some
            row["keywords"] = node["keywords"]
        yield {**row, "keyphrases": keyphrases}


def entity_rows(papers: Sequence[Paper], typed: Sequence[tuple[str, object]]) -> Iterator[dict]:
    """One record per paper for ``entities.jsonl`` (docs/entities.md): its mentions in character
    offsets of its abstract as the input gave it (end exclusive; the model read it with white space
    single, `Paper.abstract`) and its relations (indices into the mentions)."""
    from kg.text.clean import given_spans

    for p, (pid, found) in zip(papers, typed):
        text, spans = p.abstract, None
        if p.given is not None and (spans := given_spans(p.given, p.abstract)) is not None:
            text = p.given
        starts, ends = spans or (range(len(p.abstract)), range(1, len(p.abstract) + 1))
        yield {
            "id": pid,
            "entities": [{"start": starts[e.start], "end": ends[e.end - 1], "text": text[starts[e.start]:ends[e.end - 1]],
                          "type": e.type, "score": e.score} for e in found.entities],
            "relations": [{"head": r.head, "tail": r.tail, "type": r.type, "score": r.score} for r in found.relations],
        }


def entity_stats(typed: Iterable[tuple[str, object]], G: nx.Graph) -> dict:
    """The figures of ``stats.json``'s ``entities``: mentions and relations by type, the papers with
    any, the concepts by voted type, and the typed relations between concepts by type."""
    from collections import Counter

    from kg.graph.stats import typed_figures

    mentions, relations, papers = Counter(), Counter(), 0
    for _, found in typed:
        papers += bool(found.entities)
        mentions.update(e.type for e in found.entities)
        relations.update(r.type for r in found.relations)
    return {
        "papers_with_mentions": papers,
        "mentions": sum(mentions.values()), "mentions_by_type": dict(sorted(mentions.items())),
        "relations": sum(relations.values()), "relations_by_type": dict(sorted(relations.items())),
        **typed_figures(G),
    }


def write_records(f, records: Iterable[dict]) -> None:
    for r in records:
        f.write(utf8(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n"))  # a lone surrogate as U+FFFD


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Hashing(HashingFile):
    """A binary file that keeps the SHA-256 of what is written to it (for the manifest)."""

    def __init__(self, f, folder: Path | None = None) -> None:
        super().__init__(f)
        self.folder = folder  # where a writer that needs a file of its own may make a temporary one


class Staging:
    """The output files of a build, each written to a temporary name in *out* as soon as it is
    made (so that no two are held in memory at once), then renamed into place together by
    `commit`; `discard` removes what was written. A failed build leaves the previous outputs whole."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{self.out}: cannot create the output folder ({e.strerror})") from e
        self._staged: dict[str, Path] = {}
        self.sha256: dict[str, str] = {}  # name -> hex digest of each file written
        self.discard_stale(OUTPUT_FILES)  # temporary files a killed build left behind

    @contextmanager
    def open(self, name: str):
        """A binary file to write the output *name* to; it is synced to disk when the block ends."""
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.out)
            self._staged[name] = Path(tmp)
            with os.fdopen(fd, "wb", buffering=1 << 20) as raw:
                f = _Hashing(raw, self.out)
                yield f
                raw.flush()
                os.fsync(raw.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
        except OSError as e:
            raise OutputError(f"{self.out}: cannot write the outputs ({e.strerror or e}); the previous outputs are unchanged") from e
        self.sha256[name] = f.sha256.hexdigest()

    def path(self, name: str) -> Path:
        """Where the output *name* was written, until `commit`."""
        return self._staged[name]

    def written(self) -> dict[str, tuple[str, str]]:
        """Each file written so far: name -> (temporary path, SHA-256), for `adopt`."""
        return {name: (str(tmp), self.sha256[name]) for name, tmp in self._staged.items() if name in self.sha256}

    def adopt(self, written: dict[str, tuple[str, str]]) -> None:
        """Take over files another process wrote into this folder (its `written`)."""
        for name, (tmp, digest) in written.items():
            self._staged[name] = Path(tmp)
            self.sha256[name] = digest

    def discard_stale(self, names: Sequence[str]) -> None:
        """Remove the temporary files of *names* that a stopped writer left (not adopted)."""
        for name in names:
            for stale in self.out.glob(f".{name}.*.tmp"):
                if stale != self._staged.get(name):
                    stale.unlink(missing_ok=True)

    def commit(self) -> list[Path]:
        """Rename every written file into place; their final paths, in `OUTPUT_FILES` order."""
        names = [name for name in OUTPUT_FILES if name in self._staged]
        in_the_way = [name for name in names if (self.out / name).is_dir()]  # a rename onto it would fail halfway
        if in_the_way:
            self.discard()
            raise OutputError(f"{self.out / in_the_way[0]}: a folder where kg writes a file; move it away and build again"
                              " (the previous outputs are unchanged)")
        try:
            for name in names:
                os.replace(self._staged[name], self.out / name)
        except OSError as e:
            raise OutputError(f"{self.out}: cannot write the outputs ({e.strerror or e}); the previous outputs are unchanged") from e
        finally:
            self.discard()
        return [self.out / name for name in names]

    def discard(self) -> None:
        for tmp in self._staged.values():
            tmp.unlink(missing_ok=True)
        self._staged.clear()


@contextmanager
def signals_held(done: str):
    """SIGINT and SIGTERM held while the block runs (the outputs are renamed into place, a few
    milliseconds), so that the folder ends with every output of one build, never some of each.

    A SIGINT that came meanwhile is `OutputsWritten` (saying *done*) once the block is done; a SIGTERM is
    delivered again, as it came, with its handler back. Outside the main thread (where Python
    cannot set handlers) the block runs as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    held = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    held = {sig: handler for sig, handler in held.items() if handler is not signal.SIG_IGN}  # ignored stays ignored
    for sig in held:
        signal.signal(sig, lambda number, frame: came.append(number))
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
    if signal.SIGTERM in came:
        os.kill(os.getpid(), signal.SIGTERM)
    if signal.SIGINT in came:
        raise OutputsWritten(done)


def emit_outputs(G: nx.Graph, open_output, *, records: list[dict], stats: dict, base: str, title: str = "kg",
                 entities: list[dict] | None = None) -> None:
    """Write every output file of a build, one at a time, each to the binary file that
    ``open_output(name)`` (a context manager) gives (``entities.jsonl`` only with *entities*)."""
    from kg.rdf.write import write_rdf

    write_rdf(G, open_output, base=base)
    emit_views(G, open_output, records=records, stats=stats, title=title, entities=entities)


VIEW_FILES = ("graph.html", "keyphrases.jsonl", "entities.jsonl", "graph.json", "stats.json", "graph.gexf", "map.json",
              "explorer.json", "explorer-search.sqlite")  # the outputs that are not RDF


def emit_views(G: nx.Graph, open_output, *, records: Iterable[dict] | None, stats: dict, title: str = "kg",
               entities: Iterable[dict] | None = None, map_files: bool = True) -> None:
    """Write the `VIEW_FILES` of a build, as `emit_outputs` does (``keyphrases.jsonl`` only with
    *records*, ``entities.jsonl`` only with *entities*: a build writes both before the map, `_write`;
    the `MAP_FILES` only with *map_files*: a build writes them in a process of their own, `emit_map_files`)."""
    from kg.view.mapdata import MapSettings, map_payload, with_abstracts
    from kg.view.page import render_page

    served = map_payload(G, title=title, settings=MapSettings(abstracts="none"))  # the explorer's; graph.html's but its abstracts
    with open_output("graph.html") as f:
        f.write(render_page({"source": "embedded", **with_abstracts(served, G, "auto")}, title=title).encode("utf-8"))
    if records is not None:
        with open_output("keyphrases.jsonl") as f:
            write_records(f, records)
    if entities is not None:
        with open_output("entities.jsonl") as f:
            write_records(f, entities)
    with open_output("graph.json") as f:
        write_graph_json(graph_json_view(G), f)
    with open_output("stats.json") as f:
        f.write(utf8(json.dumps(stats, ensure_ascii=False, indent=2, sort_keys=True) + "\n"))
    if map_files:
        emit_map_files(G, open_output, title=title)
    emit_explorer(G, open_output, payload=served)


MAP_FILES = ("graph.gexf", "map.json")  # the map for Gephi and VOSviewer: read from the graph alone, not from the stats


def emit_map_files(G: nx.Graph, open_output, *, title: str = "kg") -> None:
    """Write the `MAP_FILES` of a laid-out graph, as `emit_views` does."""
    from kg.graph.mapfiles import write_gexf, write_vosviewer_json

    with open_output("graph.gexf") as f:
        write_gexf(G, f)
    with open_output("map.json") as f:
        write_vosviewer_json(G, f, title=title)


def emit_explorer(G: nx.Graph, open_output, *, payload: dict | None = None) -> None:
    """Write what `kg serve` reads instead of graph.json (`kg.view.explorer`): ``explorer.json``, the map
    payload ``/api/map`` sends as it is (*payload*, when the caller made it: `Explorer.explorer_file`), and
    ``explorer-search.sqlite``, what ``/api/search`` queries (made in a temporary file in the output folder
    when *open_output* gives a file of `Staging`, in the system's otherwise)."""
    from kg.view.explorer import EXPLORER_FILE, SEARCH_FILE, Explorer

    explorer = Explorer(G)
    with open_output(EXPLORER_FILE) as f:
        f.write(explorer.explorer_file(payload))
    with open_output(SEARCH_FILE) as f:
        explorer.write_search_file(f, folder=getattr(f, "folder", None))


def render_outputs(G: nx.Graph, *, records: list[dict], stats: dict, base: str, title: str = "kg",
                   entities: list[dict] | None = None) -> dict[str, bytes]:
    """The bytes of every output file of a build, by file name (`OUTPUT_FILES`; ``entities.jsonl``
    only with *entities*, its records)."""
    from kg.rdf.write import in_memory

    contents = in_memory(lambda open_output: emit_outputs(G, open_output, records=records, stats=stats, base=base, title=title,
                                                          entities=entities))
    return {name: contents[name] for name in OUTPUT_FILES if name in contents}
