"""How readable a drawn map is: which concept labels an OCR engine reads on a screenshot, at
their nodes.

The map page's own state says which labels it drew and where; this reads the pixels instead,
with Debian's ``tesseract`` (tesseract-ocr), so that a label hidden under others, cut off, too
small or too pale does not count. Two readings:

* `read_labels`: each label's box (at its node) is cut out of the screenshot with a few pixels
  around it, the cuts are stacked on a white page, and tesseract reads them as lines; a label
  counts when the line read in its cut matches it (`MATCH` similarity or more, case and
  punctuation aside). This is how a person reads a map: label by label, where it is.
* `read_words` and `readable_labels`: tesseract reads the whole screenshot as sparse text and a
  label counts when a run of the words it found matches it within `NEAR` pixels of where it is
  drawn. On a dense map tesseract's page segmentation takes the dots around a label for part
  of it and misses labels a person reads, so this reading gives fewer.

Labels in a list beside the map do not count. Used by the tests (tests/view) and
``python -m benchmarks.page``.
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


def _tesseract(png: Path, mode: str) -> str:
    exe = shutil.which("tesseract")
    if exe is None:
        raise KGError("tesseract is not installed: `apt-get install -y tesseract-ocr` (make install-test does it)")
    done = subprocess.run([exe, str(png), "stdout", "--psm", mode, "tsv"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise KGError(f"tesseract failed on {png}: {done.stderr.strip()[-300:]}")
    return done.stdout


def read_labels(png: Path, labels: Sequence[OnScreen], *, margin: tuple[int, int] = (3, 0), gap: int = 14) -> list[str]:
    """The ids of *labels* (each with its box: x, y its centre, w, h its size, in the pixels of
    *png*) whose text tesseract reads in the box cut out of *png* (*margin* pixels wider and
    taller on each side), in the order of *labels*."""
    import tempfile

    from PIL import Image

    shot = Image.open(png).convert("RGB")
    cuts, rows, top = [], [], gap
    for label in labels:
        box = (round(label.x - label.w / 2) - margin[0], round(label.y - label.h / 2) - margin[1],
               round(label.x + label.w / 2) + margin[0], round(label.y + label.h / 2) + margin[1])
        cut = shot.crop(box)
        cuts.append((cut, top))
        rows.append((top, top + cut.height))
        top += cut.height + gap
    if not cuts:
        return []
    page = Image.new("RGB", (max(c.width for c, _ in cuts) + 2 * gap, top), "white")
    for cut, at in cuts:
        page.paste(cut, (gap, at))
    with tempfile.TemporaryDirectory(prefix="kg-ocr-") as work:
        path = Path(work) / "labels.png"
        page.save(path)
        words = _words(_tesseract(path, "6"), 0.0)
    found: dict[int, list[Word]] = {}
    for w in words:
        middle = w.top + w.height / 2
        for k, (a, b) in enumerate(rows):
            if a <= middle <= b:
                found.setdefault(k, []).append(w)
                break
    read = []
    for k, label in enumerate(labels):
        text = _norm(" ".join(w.text for w in sorted(found.get(k, []), key=lambda w: w.left)))
        want = _norm(label.label)
        if text and want and SequenceMatcher(None, text, want).ratio() >= MATCH:
            read.append(label.id)
    return read


def read_words(png: Path, *, min_confidence: float = 30.0) -> list[Word]:
    """The words tesseract reads in *png* (sparse text: labels scattered over a picture)."""
    return _words(_tesseract(png, "11"), min_confidence)


def _words(tsv: str, min_confidence: float) -> list[Word]:
    words = []
    for row in tsv.splitlines()[1:]:
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
