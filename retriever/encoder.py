"""Sentence encoders: load by registry name / path / hub id, encode to L2-normalized float32 vectors.

Normalization makes FAISS inner product equal cosine similarity. max_seq_length is always set explicitly:
RoBERTa-family configs (RadBERT) advertise 514 positions, which overflows at 512 tokens.

`backend` picks who runs the forward pass: `torch` (sentence-transformers' own encode) or the fast CPU path of
retriever/onnx_encoder.py (`onnx`, `onnx-int8`). Vectors from different backends differ slightly, so an index
records its backend and queries are encoded with the same one. A fast backend whose export is already cached is
opened without sentence-transformers (no torch import: a cold `assistant search` takes 0.9 s instead of 7.4 s,
eval/results/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from models.file_hash import cached_sha256
from models.resolve import ModelNotAvailable, resolve_encoder

if TYPE_CHECKING:
    from retriever.onnx_encoder import OnnxRunner

log = logging.getLogger(__name__)
_MAX_POSITIONS = 512
BACKENDS = ("torch", "onnx", "onnx-int8")
#: What `assistant index` builds with: int8 ONNX, measured at equal findings -> impression match@5 and well above the
#: throughput of the default torch encode (eval/results/performance.md). Override with RADSEARCH_ENCODER_BACKEND.
INDEX_BACKEND = "onnx-int8"


def index_backend() -> str:
    """The backend new indexes are built with: RADSEARCH_ENCODER_BACKEND, else INDEX_BACKEND."""
    backend = os.environ.get("RADSEARCH_ENCODER_BACKEND", INDEX_BACKEND)
    if backend not in BACKENDS:
        raise ValueError(f"RADSEARCH_ENCODER_BACKEND={backend!r}: choose one of {', '.join(BACKENDS)}")
    return backend


def weights_fingerprint(location: str) -> str:
    """SHA-256 over a model folder's weight-file hashes: two encoders match only if their weights are identical (file
    hashes are cached by size and modification time, models/file_hash.py, so a command does not re-read them)."""
    folder = Path(location)
    if not folder.is_dir():
        return f"hub:{location}"
    weights = sorted(p for p in folder.rglob("*") if p.suffix in {".safetensors", ".bin"})
    digest = hashlib.sha256()
    for path in weights:
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(cached_sha256(path).encode())
    return digest.hexdigest()


@dataclass
class Encoder:
    """An encoder plus the identity recorded in index manifests.

    `model` is the sentence-transformers model; it is None when a fast backend was opened from its cached export
    (`runner`), which then does all the work. With a model and no runner, a fast backend exports on first use.
    """

    name: str
    location: str
    model: object | None = field(repr=False)
    backend: str = "torch"
    threads: int | None = None  # fast backends: ONNX Runtime threads (None: onnx_encoder.default_threads)
    runner: OnnxRunner | None = field(default=None, repr=False)

    @property
    def dims(self) -> int:
        if self.backend != "torch":
            return self._fast().spec.dims
        return int(self.model.get_embedding_dimension())

    @property
    def max_seq_length(self) -> int:
        if self.backend != "torch":
            return self._fast().spec.max_seq_length
        return int(self.model.max_seq_length)

    @property
    def backend_version(self) -> int:
        """Version of the ONNX export recipe behind a fast backend (0 for torch): a new recipe (graph fusion,
        another quantization) changes the vectors slightly, so indexes record it and refuse queries from another."""
        if self.backend == "torch":
            return 0
        from retriever.onnx_encoder import EXPORT_VERSION

        return EXPORT_VERSION

    @cached_property
    def fingerprint(self) -> str:
        return weights_fingerprint(self.location)

    def encode(self, texts: list[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Embed texts as an (n, dims) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        if self.backend != "torch":
            return self._fast().encode(texts, batch_size, progress=progress)
        vectors = self.model.encode(
            texts,
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _fast(self) -> OnnxRunner:
        """The ONNX Runtime runner, exported from these weights on first use (cached on disk)."""
        if self.runner is None:
            from retriever.onnx_encoder import OnnxRunner

            self.runner = OnnxRunner.load(self.model, self.fingerprint, self.backend, threads=self.threads)
        return self.runner

    def count_tokens(self, text: str) -> int:
        """Number of tokens the model's tokenizer makes of `text` (special tokens included)."""
        if self.backend != "torch":
            return self._fast().spec.count_tokens(text)
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])


def load_encoder(
    ref: str,
    *,
    max_seq_length: int | None = None,
    device: str | None = None,
    backend: str = "torch",
    threads: int | None = None,
) -> Encoder:
    """Load an encoder by registry name, local path, trained model name or hub id, run by `backend`.

    `device` defaults to RADSEARCH_ENCODER_DEVICE, else `cpu`; on a GPU (`cuda`) the torch backend is used, since
    the fast backends are the CPU path.
    """
    device = device or os.environ.get("RADSEARCH_ENCODER_DEVICE", "cpu")
    if backend not in BACKENDS:
        raise ValueError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    location, entry = resolve_encoder(ref)
    name = entry.name if entry else ref
    limit = max_seq_length or (entry.max_seq_length if entry else None) or _configured_max_seq_length(location)
    if backend != "torch" and device == "cpu" and limit:
        from retriever.onnx_encoder import OnnxRunner

        fingerprint = weights_fingerprint(str(location))
        limit = min(int(limit), _MAX_POSITIONS)
        runner = OnnxRunner.cached(fingerprint, backend, max_seq_length=limit, threads=threads)
        if runner is not None:
            return Encoder(name, str(location), None, backend, threads, runner)
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-tensor "Loading weights" bars are noise in a CLI
    try:
        model = SentenceTransformer(str(location), device=device)
    except OSError as exc:
        raise ModelNotAvailable(
            f"cannot load encoder {ref!r} from {location}: {exc}. A hub id needs internet (set "
            "RADSEARCH_ALLOW_DOWNLOADS=1) or a Hugging Face cache; otherwise pass a local folder."
        ) from exc
    model.max_seq_length = min(int(limit or model.max_seq_length or _MAX_POSITIONS), _MAX_POSITIONS)
    if backend != "torch":
        from retriever.onnx_encoder import supported

        if device != "cpu" or not supported(model):
            log.warning("encoder %s: the %s path does not apply (device %s); using torch", ref, backend, device)
            backend = "torch"
    return Encoder(name, str(location), model, backend, threads)


def _configured_max_seq_length(location: Path | str) -> int | None:
    """The sequence limit a sentence-transformers folder declares (sentence_bert_config.json), None if it has none."""
    try:
        value = json.loads((Path(location) / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return int(value) if value else None
