"""`assistant train-reranker`: train a cross-encoder second stage on a site's own findings -> impression pairs."""

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
from retriever.training.reranker_config import DEFAULT_RERANK_CONFIG as DEFAULTS


def train_reranker(
    corpus: CorpusArgument,
    out: Annotated[str, typer.Option(help="Name of the trained re-ranker (saved in the models directory).")],
    base: Annotated[
        str, typer.Option(help="Encoder whose transformer it starts from: minilm, a trained encoder's name, a folder.")
    ] = DEFAULTS.base,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the training examples.")] = DEFAULTS.epochs,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per batch.")] = DEFAULTS.batch_size,
    lr: Annotated[float, typer.Option(min=0.0, help="Peak learning rate.")] = DEFAULTS.lr,
    max_length: Annotated[
        int, typer.Option(min=16, max=512, help="Tokens of findings + impression read together.")
    ] = DEFAULTS.max_length,
    seed: Annotated[int, typer.Option(help="Random seed (batches, the new scoring head).")] = DEFAULTS.seed,
    resume: ResumeOption = False,
    overwrite: OverwriteOption = False,
    checkpoint_steps: CheckpointStepsOption = DEFAULTS.checkpoint_steps,
    column_map: ColumnMapOption = None,
) -> None:
    """Train a re-ranker: each findings text read with its own impression and with impressions that differ from it
    (another report, the finding negated, a side/severity/size changed, an unsupported finding added). 80 % of
    reports train, 10 % (dev) score it before and after. Use it with `--reranker NAME` (search, ask, chat) or
    RADSEARCH_RERANKER=NAME."""
    from rich.console import Console

    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import training_reports
    from models.resolve import ModelNotAvailable
    from retriever.training.data import TrainingError
    from retriever.training.reranker import train_reranker as train
    from retriever.training.reranker_config import RerankConfig

    console = Console(stderr=True)
    settings, result = training_reports(console, corpus, column_map)
    config = RerankConfig(
        base=base,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length,
        seed=seed,
        checkpoint_steps=checkpoint_steps,
    )
    try:
        trained = train(
            result.reports, out, config, overwrite=overwrite, resume=resume, models_root=settings.paths.models
        )
    except (TrainingError, ModelNotAvailable, ValueError) as exc:
        print_error(console, exc)
        raise typer.Exit(1) from exc
    card = trained.card
    console.print(
        literal(f"trained {out} -> {trained.path}", style="green"),
        literal(f" pairs {card['data']['pairs']}, seconds/epoch {card['train_seconds_per_epoch']}"),
    )
    accuracy = card["dev_pairwise_accuracy"]
    console.print(literal(f"dev pairwise accuracy before: {accuracy['before']}\ndev after:  {accuracy['after']}"))
    console.print(literal(f"search with it: assistant search QUERY --reranker {out}"))
