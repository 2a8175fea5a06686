"""What the commands share: the exit code for bad input, options several commands take, reading the settings once
at the start of a command, and checking the report files a command is given before reading any."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.output import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import Settings
    from retriever.encoders.encoder import Encoder
    from retriever.reports.ingest import IngestResult
    from retriever.reports.sources import ColumnMap

FIELD_HELP = "Field to match: impression (likely impressions), findings (similar findings) or report (full text)."

BackendOption = Annotated[
    str | None, typer.Option(help="embedded (llama-cpp-python) or openai (a vLLM/llama.cpp/Ollama server).")
]
CorpusArgument = Annotated[list[str], typer.Argument(help="Report files or folders (CSV, JSONL, .txt), or `demo`.")]
#: Ingestion options shared by `assistant index` and `assistant update` (same exclusions, same rejects log).
KeepIncompleteOption = Annotated[bool, typer.Option(help="Keep reports missing findings or impression (paper: drop).")]
KeepDuplicateFindingsOption = Annotated[
    bool,
    typer.Option(
        "--keep-duplicate-findings/--drop-duplicate-findings",
        help="Keep every study, also those whose findings repeat another's (a search shows identical reports as one "
        "hit); drop: the RadSearch paper's exclusion.",
    ),
]
RejectsOption = Annotated[
    Path | None, typer.Option(help="Write every rejected record and its reason to this JSONL file.")
]
BatchSizeOption = Annotated[int, typer.Option(min=1, help="Encoding batch size.")]
MaxRejectedOption = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Refuse (exit 2, nothing written) when a file of 10+ records has more than "
        "this share of them rejected; 1 indexes whatever is readable.",
    ),
]
ColumnMapOption = Annotated[
    str | None, typer.Option("--map", help="Column mapping, e.g. findings=Befund,impression=Beurteilung")
]
RerankerOption = Annotated[
    str | None,
    typer.Option(
        help="Re-score the top 20 hits: `support` (model-free, impression searches only: demotes impressions that "
        "assert what a findings query of 15+ words never says) or a cross-encoder trained by `assistant "
        "train-reranker` (name or folder); NAME@0.5 for its share of the score; off: none; default: "
        "RADSEARCH_RERANKER, else support.",
    ),
]
ModelOption = Annotated[
    str | None, typer.Option(help="embedded: qwen1.5b, smollm2 or a .gguf path; openai: served model name.")
]
ModeOption = Annotated[
    str | None,
    typer.Option(
        help="How the answer is made: evidence (no model: the best-supported diagnosis the similar reports affirm), "
        "choice (the model chooses among those diagnoses), free-text (the model writes from the top reports, the "
        "paper's setting) or no-retrieval (the model alone). Default: the preset's.",
    ),
]
PresetOption = Annotated[
    str | None,
    typer.Option(
        help="Named settings (models/presets/): default (the tuned values) or paper (dense search, the top report, "
        "the free-text prompt); default: RADSEARCH_PRESET, else default.",
    ),
]
#: The index and encoder options of `assistant search` and `assistant ask`.
IndexOption = Annotated[Path | None, typer.Option(help="Index folder (default: the demo/default index).")]
SearchEncoderOption = Annotated[
    str | None, typer.Option(help="Encoder to search with; must be the one that built the index.")
]
#: The study-date filter of `assistant search` and `assistant ask` (retriever.index.report_index.SearchFilters).
SinceOption = Annotated[
    str | None, typer.Option(help="Only reports of studies on or after this date (YYYY-MM-DD, also 20261123).")
]
UntilOption = Annotated[str | None, typer.Option(help="Only reports of studies on or before this date (YYYY-MM-DD).")]


def read_settings(err: Console, preset: str | None = None) -> Settings:
    """The settings from this process's environment over the chosen preset (`--preset`, else RADSEARCH_PRESET); a
    refused value (or a malformed abbreviation table, an unknown preset) is an error message and exit 2. Every index
    this command searches is given the expander the settings name (`SearchSettings.expander`, read here once so a
    malformed table is reported before anything else)."""
    from assistant.commands.output import print_error
    from assistant.settings import Settings

    try:
        settings = Settings.from_env(os.environ, preset)
        settings.search.expander()
        return settings
    except ValueError as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc


def checked_corpus(err: Console, corpus: list[str], column_map: str | None) -> ColumnMap:
    """The `--map` of a command reading `corpus`, after checking every corpus path first: a mistyped path must not
    give a partial index or model (each problem printed, exit 2); a bad `--map` is a usage error."""
    from assistant.commands.output import print_error
    from retriever.reports.sources import ColumnMap, unusable_corpora

    if unusable := unusable_corpora(corpus):
        for problem in unusable:
            print_error(err, problem)
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        return ColumnMap.parse(column_map)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--map") from exc


def training_reports(err: Console, corpus: list[str], column_map: str | None) -> tuple[Settings, IngestResult]:
    """What `assistant train` and `train-reranker` start with: the settings, then the corpus read (paths checked
    first) with its counts printed."""
    import logging

    from assistant.commands.output import literal
    from retriever.reports.ingest import ingest

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    settings = read_settings(err)
    mapping = checked_corpus(err, corpus, column_map)
    with err.status("reading reports"):
        result = ingest(corpus, mapping=mapping)
    err.print(
        literal(
            f"{result.records_in} records read, {len(result.reports)} usable reports; rejected: "
            f"{dict(result.reasons()) or 'none'}"
        )
    )
    return settings, result


#: Options both trainers take, with the same meaning.
ResumeOption = Annotated[bool, typer.Option(help="Continue an interrupted run from its last checkpoint.")]
OverwriteOption = Annotated[bool, typer.Option(help="Replace an existing model (or stale checkpoints) of this name.")]
CheckpointStepsOption = Annotated[int, typer.Option(min=1, help="Save a resumable checkpoint every N steps.")]


def load_index_encoder(err: Console, settings: Settings, ref: str) -> Encoder:
    """The encoder a build indexes with (the settings' backend and device); a model that is not installed is an
    error message and exit 1, after the corpus was read and its counts printed."""
    from assistant.commands.output import print_error
    from models.resolve import ModelNotAvailable
    from retriever.encoders.encoder import load_encoder

    try:
        return load_encoder(ref, backend=settings.encoder.backend, device=settings.encoder.device)
    except ModelNotAvailable as exc:
        print_error(err, exc)
        raise typer.Exit(1) from exc
