"""Training hyperparameters, apart from the trainer: `assistant train` takes its option defaults from here without
importing torch, sentence-transformers or datasets (which retriever/training/train.py needs)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters. Defaults: the paper's (lr 2e-5, warmup 10 %, MNRL) sized for a CPU (batch 32, 1
    epoch)."""

    base: str = "minilm"
    epochs: int = 1
    batch_size: int = 32
    lr: float = 2e-5
    warmup_ratio: float = 0.1
    max_seq_length: int = 256
    #: Tokens the saved model reads at search time. Training may truncate harder to save time, but search must
    #: see whole findings: chest CT findings run ~290 tokens, and a model trained at 128 tokens scores findings ->
    #: impression match@5 0.513 on held-out CT-RATE reports when searching at 128 tokens, 0.641 at 256.
    inference_max_seq_length: int = 256
    seed: int = 42
    mask_near_duplicates: bool = False
    duplicate_threshold: float = 0.9
    cached: bool = False
    mini_batch_size: int = 16
    symmetric: bool = False
    bm25_negatives: bool = False
    negation_negatives: bool = False
    #: > 0: the query-term negation triplets train with a cosine triplet loss of this margin instead of MNRL. MNRL
    #: at scale 20 stops pushing once the negated sentence is ~0.2 below the affirmed one (its softmax weight is then
    #: e^-4); a margin asks for cos(query, affirmed) - cos(query, negated) >= margin.
    negation_margin: float = 0.0
    #: The impression with one side, severity word or measurement changed as a hard negative
    #: (retriever/training/negatives.py).
    detail_negatives: bool = False
    #: Real-sentence negation triplets keyed by the finding a resident types ("lymphadenopathy" -> "Several lymph
    #: nodes are observed.", not "No lymph node in pathological size was observed."; retriever/negation/label_pairs.py),
    #: for the reports of sources with a label list (retriever/reports/findings.py: Open-i, CT-RATE). They join the term
    #: triplets, so they train with `negation_margin` too.
    label_negatives: bool = False
    checkpoint_steps: int = 50
    log_steps: int = 10
    max_steps: int = -1  # > 0 stops early (tests, smoke runs)

    @property
    def loss_name(self) -> str:
        """Readable name of the loss the options select (recorded in the card and benchmark tables)."""
        name = "CachedMNRL" if self.cached else "MNRL"
        if self.mask_near_duplicates:
            name += f" + near-duplicate mask (cos > {self.duplicate_threshold})"
        name += " symmetric" if self.symmetric else ""
        if self.bm25_negatives:
            name += " + BM25 hard negatives"
        if self.negation_negatives:
            name += " + negation hard negatives"
            name += f" (term triplets: cosine margin {self.negation_margin})" if self.negation_margin > 0 else ""
        if self.label_negatives:
            name += " + label-query negation triplets"
        if self.detail_negatives:
            name += " + side/severity/size hard negatives"
        return name


#: The defaults: what `train_encoder` uses when given no config, and `assistant train`'s option defaults.
DEFAULT_CONFIG = TrainConfig()
