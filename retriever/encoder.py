"""Sentence encoders: load by registry name / path / hub id, encode to L2-normalized float32 vectors.

Normalization makes FAISS inner product equal cosine similarity. max_seq_length is always set explicitly:
RoBERTa-family configs (RadBERT) advertise 514 positions, which overflows at 512 tokens.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from models.resolve import ModelNotAvailable, resolve_encoder, sha256_file

# No network at run time unless the user opts in (patient data stays local; hubs are unreachable anyway).
if os.environ.get("RADSEARCH_ALLOW_DOWNLOADS") != "1":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_MAX_POSITIONS = 512


@dataclass
class Encoder:
    """A loaded sentence-transformers model plus the identity recorded in index manifests."""

    name: str
    location: str
    model: object = field(repr=False)

    @property
    def dims(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 over the weight files' hashes: two encoders match only if their weights are identical."""
        folder = Path(self.location)
        if not folder.is_dir():
            return f"hub:{self.location}"
        weights = sorted(p for p in folder.rglob("*") if p.suffix in {".safetensors", ".bin"})
        digest = hashlib.sha256()
        for path in weights:
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(sha256_file(path).encode())
        return digest.hexdigest()

    def encode(self, texts: list[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Embed texts as an (n, dims) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vectors = self.model.encode(
            texts,
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        """Number of tokens the model's tokenizer makes of `text` (special tokens included)."""
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])


def load_encoder(ref: str, *, max_seq_length: int | None = None, device: str = "cpu") -> Encoder:
    """Load an encoder by registry name, local path, trained model name or hub id."""
    location, entry = resolve_encoder(ref)
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
    limit = max_seq_length or (entry.max_seq_length if entry else None) or model.max_seq_length or _MAX_POSITIONS
    model.max_seq_length = min(int(limit), _MAX_POSITIONS)
    return Encoder(name=entry.name if entry else ref, location=str(location), model=model)
