"""Text no writer may choke on, for the property tests of each output format: anything, with
more than its share of C0 controls, lone surrogates, U+FFFE/U+FFFF, line and paragraph
separators, bidi overrides and the strings that end a script, a CDATA section or a comment."""

from __future__ import annotations

import copy

import networkx as nx
from hypothesis import strategies as st

_PIECES = ["\x00", "\x01", "\x08", "\x0b", "\x1b", "\x7f", "\x85", "\ud800", "\udfff", "\udbff\udc00", "\ufffe", "\uffff",
           "\u2028", "\u2029", "\u202e", "\u200f", "\ufeff", "</script>", "</SCRIPT ", "<!--", "-->", "]]>", "<![CDATA[",
           '"', "'", "&", "&amp;", "<", ">", "\\", "\\u0000", "\t", "\n", "\r", " ", "%", "#", "{", "}", ",", ";"]
HOSTILE_TEXT = st.lists(st.one_of(st.characters(), st.sampled_from(_PIECES)), min_size=1, max_size=24).map("".join)


def with_text(G: nx.Graph, text: str) -> nx.Graph:
    """A copy of *G* with *text* in every paper's title, label, venue and first author's name and
    before every concept's and venue's label (the ids stay as they are)."""
    H = copy.deepcopy(G)
    for _, d in H.nodes(data=True):
        if d.get("kind") == "paper":
            d.update(title=text, label=text, venue=text)
            if d.get("authors"):
                d["authors"] = [{"name": text, "orcid": None}, *d["authors"][1:]]
        elif d.get("kind") in ("concept", "venue"):
            d["label"] = text + d["label"]
    return H
