"""`assistant train`: fine-tune a report encoder on a site's own findings -> impression pairs (no labels needed)."""

from __future__ import annotations

from typing import Annotated

import typer

from assistant.commands.shared import (
    CheckpointStepsOption,
    ColumnMapOption,
    CorpusArgument,
    OverwriteOption,
    ResumeOption,
)
from retriever.training.config import DEFAULT_CONFIG as DEFAULTS
from retriever.training.config import TrainConfig

OutOption = Annotated[str, typer.Option(help="Name of the trained model (saved in the models directory).")]
BaseOption = Annotated[str, typer.Option(help="Encoder to start from: minilm, mpnet, a folder or a hub id.")]
EpochsOption = Annotated[int, typer.Option(min=1, help="Passes over the training pairs.")]
BatchSizeOption = Annotated[int, typer.Option(min=2, help="Pairs per batch (= in-batch negatives + 1).")]
LrOption = Annotated[float, typer.Option(min=0.0, help="Peak learning rate (paper: 2e-5).")]
MaxSeqLengthOption = Annotated[int, typer.Option(min=16, max=512, help="Tokens kept per text.")]
SeedOption = Annotated[int, typer.Option(help="Random seed (batches, initialization of anything new).")]
MaskNearDuplicatesOption = Annotated[
    bool, typer.Option(help="Ignore in-batch impressions nearly identical to the positive.")
]
DuplicateThresholdOption = Annotated[
    float, typer.Option(help="Cosine above which an impression counts as a near-duplicate.")
]
CachedOption = Annotated[bool, typer.Option(help="CachedMNRL: large batches in small memory (set --batch-size high).")]
MiniBatchSizeOption = Annotated[int, typer.Option(min=1, help="Texts embedded at once with --cached.")]
SymmetricOption = Annotated[bool, typer.Option(help="Also train impression -> findings (symmetric loss).")]
Bm25NegativesOption = Annotated[bool, typer.Option(help="Add a BM25-mined hard negative impression per findings text.")]
NegationNegativesOption = Annotated[
    bool,
    typer.Option(
        help="Add the impression with its finding negated (or affirmed) as a hard negative, "
        "and query-term -> affirmed/negated sentence triplets."
    ),
]
NegationMarginOption = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=2.0,
        help="With --negation-negatives: also require cos(term, affirmed "
        "sentence) - cos(term, negated sentence) >= this margin (0: ranking loss only).",
    ),
]
DetailNegativesOption = Annotated[
    bool,
    typer.Option(
        help="Add the impression with one side (left/right), severity word or measurement changed as a hard negative."
    ),
]
LabelNegativesOption = Annotated[
    bool,
    typer.Option(
        help="Add real-sentence triplets keyed by the finding a resident types "
        "('lymphadenopathy' -> a sentence reporting lymph nodes, not one ruling them out), from "
        "the reports of sources with a label list (Open-i, CT-RATE); trained with --negation-margin."
    ),
]
#: `train`'s options that are TrainConfig fields of the same name (the config's other fields keep their defaults).
CONFIG_OPTIONS = (
    "base",
    "epochs",
    "batch_size",
    "lr",
    "max_seq_length",
    "seed",
    "mask_near_duplicates",
    "duplicate_threshold",
    "cached",
    "mini_batch_size",
    "symmetric",
    "bm25_negatives",
    "negation_negatives",
    "negation_margin",
    "detail_negatives",
    "label_negatives",
    "checkpoint_steps",
)


def train(
    corpus: CorpusArgument,
    out: OutOption,
    base: BaseOption = DEFAULTS.base,
    epochs: EpochsOption = DEFAULTS.epochs,
    batch_size: BatchSizeOption = DEFAULTS.batch_size,
    lr: LrOption = DEFAULTS.lr,
    max_seq_length: MaxSeqLengthOption = DEFAULTS.max_seq_length,
    seed: SeedOption = DEFAULTS.seed,
    resume: ResumeOption = False,
    overwrite: OverwriteOption = False,
    mask_near_duplicates: MaskNearDuplicatesOption = DEFAULTS.mask_near_duplicates,
    duplicate_threshold: DuplicateThresholdOption = DEFAULTS.duplicate_threshold,
    cached: CachedOption = DEFAULTS.cached,
    mini_batch_size: MiniBatchSizeOption = DEFAULTS.mini_batch_size,
    symmetric: SymmetricOption = DEFAULTS.symmetric,
    bm25_negatives: Bm25NegativesOption = DEFAULTS.bm25_negatives,
    negation_negatives: NegationNegativesOption = DEFAULTS.negation_negatives,
    negation_margin: NegationMarginOption = DEFAULTS.negation_margin,
    detail_negatives: DetailNegativesOption = DEFAULTS.detail_negatives,
    label_negatives: LabelNegativesOption = DEFAULTS.label_negatives,
    checkpoint_steps: CheckpointStepsOption = DEFAULTS.checkpoint_steps,
    column_map: ColumnMapOption = None,
) -> None:
    """Fine-tune an encoder on findings -> impression pairs; 80 % of reports train, 10 % score each epoch (dev),
    10 % are held out for benchmarks. Use the result with `assistant index CORPUS --encoder NAME`."""
    arguments = dict(locals())  # the options as parsed: the config is made of those named in CONFIG_OPTIONS
    from rich.console import Console

    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import training_reports
    from models.resolve import ModelNotAvailable
    from retriever.training.data import TrainingError
    from retriever.training.train import train_encoder

    console = Console(stderr=True)
    settings, result = training_reports(console, corpus, column_map)
    config = TrainConfig(**{name: arguments[name] for name in CONFIG_OPTIONS})
    try:
        trained = train_encoder(
            result.reports,
            out,
            config,
            skipped=result.reasons(),
            overwrite=overwrite,
            resume=resume,
            models_root=settings.paths.models,
        )
    except (TrainingError, ModelNotAvailable, ValueError) as exc:
        print_error(console, exc)
        raise typer.Exit(1) from exc
    card = trained.card
    console.print(
        literal(f"trained {out} -> {trained.path}", style="green"),
        literal(f" pairs {card['data']['pairs']}, seconds/epoch {card['train_seconds_per_epoch']}"),
    )
    console.print(literal(f"dev before: {card['dev_metrics']['before']}\ndev after:  {card['dev_metrics']['after']}"))
    console.print(literal(f"index with it: assistant index CORPUS --encoder {out}"))
