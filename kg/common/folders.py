"""What a build folder holds, by name: what reading (not to read a build as input), the build, the
store and the server agree on."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CACHE", "MANIFEST", "STORE", "STORE_SOURCE", "is_build_folder"]

CACHE = ".cache"  # the extraction cache, the read cache (kg.text.readcache) and the build manifest
MANIFEST = "manifest.json"  # in CACHE: what was built from what (kg.pipeline.manifest)
STORE = "store"  # the on-disk Oxigraph store (kg.sparql.store)
STORE_SOURCE = "source.json"  # in STORE: the graph.nt it was loaded from (size, mtime, Oxigraph version)


def is_build_folder(folder: Path) -> bool:
    """Whether *folder* is one `kg build` wrote: it holds the build manifest, or graph.nt beside
    the store or the cache."""
    return (folder / CACHE / MANIFEST).is_file() or (
        (folder / "graph.nt").is_file() and ((folder / STORE).is_dir() or (folder / CACHE).is_dir()
                                             or ((folder / "graph.json").is_file() and (folder / "keyphrases.jsonl").is_file()))
    )
