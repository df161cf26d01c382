"""Concept labels with a citation key, markup or stray punctuation at an end, in a build (issue 49).

    python -m benchmarks.label_noise OUT [OUT ...]   # OUT: a `kg build` output folder

Prints the count per build and each noisy label with what is wrong with it (`kg.text.noise.label_noise`),
its concept and whether it is the preferred or an alternative label.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kg.text.noise import label_noise


def noisy_labels(out: Path) -> list[tuple[str, str, str, str]]:
    """(concept id, "pref" or "alt", label, what is wrong) for every noisy label of the build in *out*."""
    graph = json.loads((out / "graph.json").read_text(encoding="utf-8"))
    found = []
    for node in graph["nodes"]:
        if node.get("kind") != "concept":
            continue
        labels = [("pref", node["label"])] + [("alt", alt) for alt in node.get("alt_labels", [])]
        for which, label in labels:
            if (reason := label_noise(label)) is not None:
                found.append((node["id"], which, label, reason))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.label_noise", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="+", help="kg build output folders")
    args = parser.parse_args(argv)
    for out in args.out:
        found = noisy_labels(out)
        sys.stdout.write(f"{out}: {len(found)} noisy labels\n")
        for cid, which, label, reason in found:
            sys.stdout.write(f"  {reason:16} {which:4} {label!r}  ({cid})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
