"""The people who wrote the papers: each paper's authors (``authors`` of its node, in byline
order) joined into persons across the corpus.

Two authors are one person when they have the same ORCID iD, or when neither has one and
their names are the same once normalized (`kg.text.records.name_key`: case, spacing and
Unicode form; no initials matched to first names). An author without an ORCID iD is also
joined to the one person with an ORCID iD who is named so, when exactly one is; when
two or more are, it stays a person of its own (the name alone cannot say which). Persons
are derived from the graph, not nodes of it: the map draws papers, concepts and venues.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import networkx as nx

from kg.text.chars import encodable
from kg.text.records import name_key

__all__ = ["Person", "people", "person_slug"]


@dataclass(frozen=True)
class Person:
    """A person: an id (``person:<slug>``), the name most often given (ties: the longest, then
    the first in order), the ORCID iD when known, and the paper nodes they wrote, in order."""

    id: str
    name: str
    orcid: str | None
    papers: tuple[str, ...]


def person_slug(*, orcid: str | None = None, name: str | None = None) -> str:
    """The slug of a person's IRI: ``orcid-<iD>``, else the name's letters and a hash of its
    normalized form (two names that differ only in punctuation stay two slugs).

    >>> person_slug(orcid="0000-0002-1825-0097")
    'orcid-0000-0002-1825-0097'
    """
    if orcid:
        return f"orcid-{orcid.lower()}"
    key = name_key(name or "")
    ascii_name = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    letters = re.sub(r"[^a-z0-9]+", "-", ascii_name).strip("-")[:60].strip("-")
    return f"{letters or 'person'}-{hashlib.sha1(encodable(key).encode()).hexdigest()[:8]}"  # a lone surrogate as U+FFFD


def people(G: nx.Graph) -> tuple[dict[str, Person], dict[str, list[str]]]:
    """The persons of *G* by id (sorted), and each paper node's person ids in byline order
    (a person listed twice on one paper is kept at each place)."""
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "paper" and d.get("authors"))
    by_name_orcid: dict[str, set[str]] = {}  # name key -> ORCID iDs of the authors so named
    for node in papers:
        for a in G.nodes[node]["authors"]:
            if a.get("orcid"):
                by_name_orcid.setdefault(name_key(a["name"]), set()).add(a["orcid"])
    names: dict[str, Counter] = {}
    orcids: dict[str, str | None] = {}
    written: dict[str, list[str]] = {}
    authors_of: dict[str, list[str]] = {}
    for node in papers:
        ids = []
        for a in G.nodes[node]["authors"]:
            orcid = a.get("orcid")
            if not orcid:
                known = by_name_orcid.get(name_key(a["name"]), set())
                orcid = next(iter(known)) if len(known) == 1 else None
            pid = "person:" + person_slug(orcid=orcid, name=a["name"])
            ids.append(pid)
            names.setdefault(pid, Counter())[a["name"]] += 1
            orcids[pid] = orcid
            if node not in written.setdefault(pid, []):
                written[pid].append(node)
        authors_of[node] = ids
    persons = {pid: Person(pid, _name(names[pid]), orcids[pid], tuple(written[pid])) for pid in sorted(names)}
    return persons, authors_of


def _name(counts: Mapping[str, int]) -> str:
    return min(counts, key=lambda n: (-counts[n], -len(n), n))
