"""Re-ranker training hyperparameters, apart from the trainer: `assistant train-reranker` takes its option defaults
from here without importing torch or sentence-transformers (which retriever/training/reranker.py needs)."""

from __future__ import annotations

from dataclasses import dataclass

from retriever.search.rerank import MAX_LENGTH


@dataclass(frozen=True)
class RerankConfig:
    """Hyperparameters of `train_reranker` (and `assistant train-reranker`'s option defaults)."""

    base: str = "minilm"
    epochs: int = 1
    batch_size: int = 16
    lr: float = 2e-5
    warmup_ratio: float = 0.1
    max_length: int = MAX_LENGTH
    seed: int = 42
    checkpoint_steps: int = 100
    log_steps: int = 20
    max_steps: int = -1  # > 0 stops early (tests, smoke runs)


#: What `train_reranker` uses when given no config, and `assistant train-reranker`'s option defaults.
DEFAULT_RERANK_CONFIG = RerankConfig()
