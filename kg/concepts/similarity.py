"""Cosines of key embeddings: the evidence near duplicates and acronym synonyms merge on."""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["cosines"]


def cosines(pairs: Sequence[tuple[str, str]], embed: Callable[[list[str]], object]) -> list[float]:
    """The cosine of the embeddings of each pair of keys (each key embedded once)."""
    if not pairs:
        return []
    import numpy as np

    texts = sorted({k for pair in pairs for k in pair})
    row = {t: i for i, t in enumerate(texts)}
    vectors = np.asarray(embed(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    a = vectors[[row[x] for x, _ in pairs]]
    b = vectors[[row[y] for _, y in pairs]]
    return np.einsum("ij,ij->i", a, b).tolist()
