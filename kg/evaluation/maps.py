"""How readable a drawn map is: which concept labels an OCR engine reads on a screenshot, at
their nodes.

The map page's own state says which labels it drew; this reads the pixels instead, with
Debian's ``tesseract`` (tesseract-ocr), so that a label hidden under others, cut off, too small
or too pale does not count. A label counts when a run of words that tesseract read matches it
(`MATCH` similarity or more, case and punctuation aside) and lies where the page draws that
label: centred on its node, within `NEAR` pixels. Labels in a list beside the map do not count.
Used by the tests (tests/view) and ``python -m benchmarks.page``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from kg.errors import KGError

__all__ = ["MATCH", "NEAR", "OnScreen", "Word", "read_words", "readable_labels"]

MATCH = 0.85
NEAR = 12.0  # pixels beyond the label's own half width and half height


@dataclass(frozen=True)
class OnScreen:
    """A node where the page draws it: its id, its label as drawn, its place (CSS pixels)
    and the size of its label's box if the page drew one (else estimated from the text)."""

    id: str
    label: str
    x: float
    y: float
    w: float = 0.0
    h: float = 0.0


@dataclass(frozen=True)
class Word:
    text: str
    left: float
    top: float
    width: float
    height: float
    line: tuple[int, int, int]


def read_words(png: Path, *, min_confidence: float = 30.0) -> list[Word]:
    """The words tesseract reads in *png* (sparse text: labels scattered over a picture)."""
    exe = shutil.which("tesseract")
    if exe is None:
        raise KGError("tesseract is not installed: `apt-get install -y tesseract-ocr` (make install-test does it)")
    done = subprocess.run([exe, str(png), "stdout", "--psm", "11", "tsv"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise KGError(f"tesseract failed on {png}: {done.stderr.strip()[-300:]}")
    words = []
    for row in done.stdout.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        if float(cells[10]) < min_confidence:
            continue
        left, top, width, height = (float(c) for c in cells[6:10])
        words.append(Word(cells[11], left, top, width, height, (int(cells[2]), int(cells[3]), int(cells[4]))))
    return words


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def readable_labels(words: Sequence[Word], nodes: Sequence[OnScreen], *,
                    region: tuple[float, float, float, float] | None = None) -> list[str]:
    """The ids of *nodes* whose label the OCR *words* read at the node (inside *region*,
    ``(left, top, right, bottom)``, when given), each node once, in the order of *nodes*."""
    lines: dict[tuple[int, int, int], list[Word]] = {}
    for w in words:
        cx, cy = w.left + w.width / 2, w.top + w.height / 2
        if region is None or (region[0] <= cx <= region[2] and region[1] <= cy <= region[3]):
            lines.setdefault(w.line, []).append(w)
    spans = []  # (normalized text, centre x, centre y) of every run of 1..8 consecutive words
    for found in lines.values():
        found.sort(key=lambda w: w.left)
        for i in range(len(found)):
            for j in range(i + 1, min(len(found), i + 8) + 1):
                run = found[i:j]
                left, right = run[0].left, max(w.left + w.width for w in run)
                top, bottom = min(w.top for w in run), max(w.top + w.height for w in run)
                spans.append((_norm(" ".join(w.text for w in run)), (left + right) / 2, (top + bottom) / 2))
    cell = 64.0
    buckets: dict[tuple[int, int], list[tuple[str, float, float]]] = {}
    for span in spans:
        buckets.setdefault((int(span[1] // cell), int(span[2] // cell)), []).append(span)
    read = []
    for node in nodes:
        want = _norm(node.label)
        if len(want) < 3:
            continue
        half_w = (node.w or 7.5 * len(node.label)) / 2 + NEAR
        half_h = (node.h or 16) / 2 + NEAR
        near = [span for gx in range(int((node.x - half_w) // cell), int((node.x + half_w) // cell) + 1)
                for gy in range(int((node.y - half_h) // cell), int((node.y + half_h) // cell) + 1)
                for span in buckets.get((gx, gy), ())]
        for text, x, y in near:
            if abs(x - node.x) <= half_w and abs(y - node.y) <= half_h and text \
                    and SequenceMatcher(None, text, want).ratio() >= MATCH:
                read.append(node.id)
                break
    return read
