"""The explorer of ``kg serve`` read from a build's outputs, never from graph.json: its start reads
nothing proportional to the build.

* ``/api/map``: `kg.view.explorer.MapFile`, the build's explorer.json streamed as it is (the
  server's title in place of the built one);
* ``/api/node``: `kg.serve.details.StoreDetails`, SPARQL on the build's store, opened read-only in
  this process (1-2 ms a node, against 1.5-2.5 ms through the worker's HTTP);
* ``/api/search``: `kg.view.explorer.SearchFile`, the build's explorer-search.sqlite, an SQLite
  database of `Explorer.search`'s index with a trigram index, queried (the same answers);
* the page needs no data; the counts `kg serve` prints are stats.json's.

A file of the explorer that is missing or of another kg (`StaleExplorerFile`) is said once in the log
when the server starts; the routes that need it then answer 409 with its message (the page shows it), and
the rest works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg.common.logs import Log, quiet
from kg.view.explorer import EXPLORER_FILE, SEARCH_FILE, MapFile, SearchFile, StaleExplorerFile

__all__ = ["StoredExplorer"]


class StoredExplorer:
    """The explorer of the build in *folder*, its node details from the store at *store* (its
    ``store/data`` folder), under *title*."""

    def __init__(self, folder: Path, store: Path, *, title: str = "kg", log: Log = quiet) -> None:
        from kg.serve.details import StoreDetails, local_runner

        self.folder, self.title = Path(folder), title
        self.summary = _summary(self.folder / "stats.json")
        self.map = _opened(lambda: MapFile(self.folder / EXPLORER_FILE, title=title))
        self.searcher = _opened(lambda: SearchFile(self.folder / SEARCH_FILE))
        stale = next((e for e in (self.map, self.searcher) if isinstance(e, Exception)), None)
        if stale is not None:  # once: the second file, if it is stale too, is so for the same reason
            log(f"the explorer cannot show this build: {stale}")
        self.details = StoreDetails(local_runner(store))

    def page(self) -> bytes:
        """The explorer page (UTF-8): the map page, told to ask this server for its data."""
        from kg.view.page import server_page

        return server_page(self.title)

    def map_file(self) -> MapFile:
        """The map payload to stream; `StaleExplorerFile` when the build has none this kg reads."""
        if isinstance(self.map, Exception):
            raise self.map
        return self.map

    def search(self, q: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """`Explorer.search` on the build's graph; `StaleExplorerFile` when the build has no search file this kg reads."""
        if isinstance(self.searcher, Exception):
            raise self.searcher
        return self.searcher.search(q, limit=limit)

    def node(self, n: str) -> dict[str, Any] | None:
        """`Explorer.node` on the build's graph, from its store."""
        return self.details.node(n)


def _opened(opener):
    """What *opener* gives, or the `StaleExplorerFile` it raises, for the routes to answer."""
    try:
        return opener()
    except StaleExplorerFile as e:
        return e


def _summary(stats: Path) -> dict[str, int | None]:
    """The counts of papers, concepts and venues of a build (its stats.json; None when unreadable)."""
    from kg.text.files import read_json

    data = read_json(stats)
    data = data if isinstance(data, dict) else {}
    return {k: data.get(k) if isinstance(data.get(k), int) else None for k in ("papers", "concepts", "venues")}
