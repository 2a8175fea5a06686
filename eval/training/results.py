"""The training group's results files as typed, versioned records (eval/common/records.py).

eval.training.benchmark writes `TrainingResults` (eval/results/training.json, after every finished step: a run that
is stopped resumes from it) and eval.training.encoder_rebuild `EncoderRebuild` (encoder_rebuild.json); their reports
and the resumed runs read them. The encoder recipe choice has its record beside its rule
(eval.training.encoder_choice.EncoderChoice). Version 1 is every file written before the version was recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eval.common.records import Record, ResultsFile, optional
from eval.retrieval.results import Metrics


@dataclass
class SetScores(Record):
    """Findings -> impression on one source's test reports, or `overall` (eval.retrieval.findings_impression); runs
    scored before the abnormal subset was added lack it, so it is optional here (unlike the retrieval benchmark's
    MatchScores)."""

    ranker: str
    corpus_impressions: int
    all: Metrics
    without_top20_impressions: Metrics
    abnormal: Metrics | None = optional()


@dataclass
class TrainingData(Record):
    """What was ingested and how it was split."""

    corpora: list[str]
    reports_in: int
    usable: int
    rejected: dict[str, int]
    split: dict[str, int]
    test_by_source: dict[str, int]
    #: retriever.reports.splits.DEFAULT_SPLIT (shares and salt).
    split_spec: dict[str, Any]


@dataclass
class DevMetrics(Record):
    """The dev split's findings -> impression metrics before and after training, and per epoch (the model card's)."""

    before: Metrics
    after: Metrics
    per_epoch: list[Metrics]


@dataclass
class TrainedVariant(Record):
    """One training recipe: its options, cost, dev metrics and test scores by source."""

    model: str
    loss: str
    #: retriever.training.train.TrainConfig as trained.
    hyperparameters: dict[str, Any]
    train_pairs: int
    seconds_per_epoch: list[float]
    wall_seconds: float
    dev: DevMetrics
    #: Share of in-batch negatives masked as near duplicates (None: masking off).
    masked_negatives: float | None
    test: dict[str, SetScores]


@dataclass
class TrainingMachine(Record):
    cpu: str
    cores: int | None
    torch_threads: int
    torch: str
    python: str
    platform: str
    load_average_at_end: list[float]


@dataclass
class TrainingResults(ResultsFile):
    """Fine-tuned against untuned encoders on the held-out test split (eval.training.benchmark)."""

    KIND = "training results"

    task: str
    data: TrainingData
    command: str
    #: Untuned ranker -> source (and `overall`) -> scores.
    baselines: dict[str, dict[str, SetScores]]
    variants: dict[str, TrainedVariant]
    machine: TrainingMachine | None = optional()
    updated: str | None = optional()


@dataclass
class EncoderRebuild(ResultsFile):
    """The shipped encoder rebuilt from its recipe and compared on the dev split (eval.training.encoder_rebuild)."""

    KIND = "encoder rebuild results"

    created: str
    command: str
    trained: str
    packaged: str
    shipped: bool
    #: `rebuilt`, `shipped`, `trained_float32` -> source (and `pooled`) -> match@5.
    dev_match_at_5: dict[str, dict[str, float]]
    pooled_difference: float
    tolerance: float
    passed: bool
