"""The torch encoder backend: sentence-transformers' own encode, the reference the fast backends are checked against,
and the one that runs on a GPU or trains."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.resolve import ModelNotAvailable


@dataclass
class TorchEncoder:
    """A sentence-transformers model as an encoder backend (retriever.encoders.encoder.EncoderBackend)."""

    model: Any = field(repr=False)
    name = "torch"
    version = 0  # no export recipe behind it

    @property
    def dims(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def encode(self, texts: list[str], batch_size: int, *, progress: bool) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])


def load_sentence_transformer(ref: str, location: Path | str, device: str) -> Any:
    """The sentence-transformers model at `location` on `device` (ModelNotAvailable with what to do if it cannot
    be loaded: a hub id offline, a broken folder).

    Always float32: transformers loads a checkpoint in the precision it was saved in, and the shipped encoder's
    weights are stored in float16 to halve their size (models/radsearch); encoding, training and the ONNX export all
    run in float32 on a CPU."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-tensor "Loading weights" bars are noise in a CLI
    try:
        return SentenceTransformer(str(location), device=device, model_kwargs={"dtype": torch.float32})
    except OSError as exc:
        raise ModelNotAvailable(
            f"cannot load encoder {ref!r} from {location}: {exc}. A hub id needs internet (set "
            "RADSEARCH_ALLOW_DOWNLOADS=1) or a Hugging Face cache; otherwise pass a local folder."
        ) from exc
