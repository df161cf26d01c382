"""What tests import by name: the project's folders and the hashing embedder. (A module of its own:
tests/view has its own conftest.py, and two conftest modules cannot both be imported as `conftest`.)"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"


class HashEmbedder:
    """A deterministic bag-of-words embedder: fast tests of everything around the model."""

    name = "test/hash-embedder"
    max_tokens = 64

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(64, dtype=np.float32)
        for word in text.lower().split():
            h = int(hashlib.md5(word.encode()).hexdigest(), 16)
            v[h % 64] += 1.0 if (h >> 7) % 2 else -1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed(self, texts):
        return np.vstack([self._vector(t) for t in texts]) if texts else np.zeros((0, 64), dtype=np.float32)

    def count_tokens(self, texts):
        return [len(t.split()) for t in texts]
