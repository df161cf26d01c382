"""What the concept stage gives the graph: `Concept`, `ConceptIndex`, and each concept's id (`concept_slug`)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Concept", "ConceptIndex", "concept_slug"]


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept node: its key (normalized form), labels and the papers it joins."""

    id: str
    key: str
    label: str
    alt_labels: tuple[str, ...]
    papers: tuple[str, ...]  # the papers that name it (a generic concept is linked to none: kg.graph.build)
    broader: tuple[str, ...] = ()  # ids of more general concepts
    specificity: float | None = None  # in [0, 1], 1 = most specific (kg.concepts.specificity); None: not measured
    generic: bool = False  # too general to be a paper's subject (kg.concepts.specificity.GENERIC_BELOW)


@dataclass(frozen=True)
class ConceptIndex:
    """Every concept, and which concept each (paper id, phrase) joined."""

    concepts: tuple[Concept, ...]
    assignment: Mapping[tuple[str, str], str]

    def by_id(self) -> dict[str, Concept]:
        return {c.id: c for c in self.concepts}


_PLAIN_KEY = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")


def concept_slug(key: str) -> str:
    """A stable IRI-safe id for a concept key (ASCII letters, digits and hyphens).

    >>> concept_slug("zeroth order optimization")
    'zeroth-order-optimization'
    >>> concept_slug("c++")
    'c-372946aa'
    """
    if len(key) <= 80 and _PLAIN_KEY.fullmatch(key):  # most keys: lowercase ASCII words
        return key.replace(" ", "-") if " " in key else key.lower()  # a new string, as below
    ascii_key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_key.lower()).strip("-")
    if slug.replace("-", " ") != key or len(slug) > 80 or not slug:
        digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]
        slug = f"{slug[:60].rstrip('-')}-{digest}" if slug else f"c-{digest}"
    return slug
