"""Sentence encoders: load by registry name / path / hub id, encode to L2-normalized float32 vectors.

Normalization makes FAISS inner product equal cosine similarity. max_seq_length is always set explicitly:
RoBERTa-family configs (RadBERT) advertise 514 positions, which overflows at 512 tokens.

`backend` picks who runs the forward pass, chosen once when the encoder is loaded: `torch` (sentence-transformers'
own encode, retriever/encoders/torch_backend.py) or the fast CPU path (`onnx`, `onnx-int8`,
retriever/encoders/onnx/encoder.py), each an EncoderBackend. Vectors from different backends differ slightly, so an
index records its backend and queries are encoded with the same one. A fast backend whose export is already cached is
opened without sentence-transformers (no torch import: a cold `assistant search` takes 0.9 s instead of 7.4 s,
eval/results/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from models.file_hash import cached_sha256
from models.resolve import resolve_encoder
from retriever.encoders.backends import BACKENDS
from retriever.encoders.onnx.encoder import OnnxEncoder
from retriever.encoders.onnx.files import FAST_BACKENDS
from retriever.encoders.onnx.spec import supported
from retriever.encoders.torch_backend import TorchEncoder, load_sentence_transformer

log = logging.getLogger(__name__)
_MAX_POSITIONS = 512


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


class EncoderBackend(Protocol):
    """What runs an Encoder's forward pass (TorchEncoder, OnnxEncoder): interchangeable, chosen once at load."""

    @property
    def name(self) -> str:
        """One of BACKENDS: recorded in index manifests, which refuse queries from another backend."""

    @property
    def version(self) -> int:
        """Version of the export recipe behind the backend (0 for torch): a new recipe (graph fusion, another
        quantization) changes the vectors slightly, so indexes record it and refuse queries from another."""

    @property
    def model(self) -> Any | None:
        """The sentence-transformers model, None for a fast backend opened from its cached export alone."""

    @property
    def dims(self) -> int: ...

    @property
    def max_seq_length(self) -> int: ...

    def encode(self, texts: list[str], batch_size: int, *, progress: bool) -> np.ndarray:
        """(n, dims) float32 unit vectors for non-empty `texts`, in their order."""

    def count_tokens(self, text: str) -> int:
        """Tokens the model's tokenizer makes of `text` before truncation (special tokens included)."""


@dataclass
class Encoder:
    """An encoder backend plus the identity recorded in index manifests (name, weights location and fingerprint)."""

    name: str
    location: str
    engine: EncoderBackend = field(repr=False)

    @property
    def backend(self) -> str:
        return self.engine.name

    @property
    def backend_version(self) -> int:
        return self.engine.version

    @property
    def model(self) -> Any | None:
        """The sentence-transformers model (training and the ONNX export need it), None when not loaded."""
        return self.engine.model

    @property
    def dims(self) -> int:
        return self.engine.dims

    @property
    def max_seq_length(self) -> int:
        return self.engine.max_seq_length

    @cached_property
    def fingerprint(self) -> str:
        return weights_fingerprint(self.location)

    def encode(self, texts: list[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Embed texts as an (n, dims) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return self.engine.encode(texts, batch_size, progress=progress)

    def count_tokens(self, text: str) -> int:
        """Number of tokens the model's tokenizer makes of `text` (special tokens included)."""
        return self.engine.count_tokens(text)


def load_encoder(
    ref: str,
    *,
    max_seq_length: int | None = None,
    device: str | None = None,
    backend: str = "torch",
    threads: int | None = None,
) -> Encoder:
    """Load an encoder by registry name, local path, trained model name or hub id, run by `backend` (`threads`: ONNX
    Runtime threads of a fast backend, None for onnx_runner.default_threads).

    `device` is where the forward pass runs, `cpu` unless given (callers pass the settings' device,
    assistant.settings.EncoderSettings); on a GPU (`cuda`) the torch backend is used, since the fast backends are
    the CPU path.
    """
    device = device or "cpu"
    if backend not in BACKENDS:
        raise ValueError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    location, entry = resolve_encoder(ref)
    name = entry.name if entry else ref
    limit = max_seq_length or (entry.max_seq_length if entry else None) or _configured_max_seq_length(location)
    if backend in FAST_BACKENDS and device == "cpu" and limit:
        fingerprint = weights_fingerprint(str(location))
        limit = min(int(limit), _MAX_POSITIONS)
        cached = OnnxEncoder.cached(fingerprint, backend, max_seq_length=limit, threads=threads)
        if cached is not None:
            return Encoder(name, str(location), cached)
    model = load_sentence_transformer(ref, location, device)
    model.max_seq_length = min(int(limit or model.max_seq_length or _MAX_POSITIONS), _MAX_POSITIONS)
    return Encoder(name, str(location), model_backend(model, str(location), backend, device=device, threads=threads))


def model_backend(
    model: Any, location: str, backend: str, *, device: str = "cpu", threads: int | None = None
) -> EncoderBackend:
    """The backend that runs a loaded sentence-transformers model: `backend` where it applies, else torch (a fast
    backend is the CPU path, for models the ONNX export reproduces exactly)."""
    if backend == "torch":
        return TorchEncoder(model)
    if device == "cpu" and supported(model):
        return OnnxEncoder(backend, weights_fingerprint(location), model, threads)
    log.warning("encoder %s: the %s path does not apply (device %s); using torch", location, backend, device)
    return TorchEncoder(model)


def _configured_max_seq_length(location: Path | str) -> int | None:
    """The sequence limit a sentence-transformers folder declares (sentence_bert_config.json), None if it has none."""
    try:
        value = json.loads((Path(location) / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return int(value) if value else None
