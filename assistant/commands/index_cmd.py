"""`assistant index`: ingest report files, encode them and write an index folder.

Exit codes: 0 indexed, 1 nothing to index or encoder unavailable, 2 bad input (an output that would replace an input
or a folder that is not an index, a bad option value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT, ColumnMapOption, CorpusArgument


def index(
    corpus: CorpusArgument,
    encoder: Annotated[
        str, typer.Option(help="Registry name (minilm, mpnet), trained model, path or hub id.")
    ] = "minilm",
    out: Annotated[Path | None, typer.Option(help="Index folder to write (default: the default index).")] = None,
    column_map: ColumnMapOption = None,
    keep_incomplete: Annotated[
        bool, typer.Option(help="Keep reports missing findings or impression (paper: drop).")
    ] = False,
    keep_duplicate_findings: Annotated[
        bool, typer.Option(help="Keep reports whose findings repeat another's.")
    ] = False,
    rejects: Annotated[
        Path | None, typer.Option(help="Write every rejected record and its reason to this JSONL file.")
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Encoding batch size.")] = 32,
    overwrite: Annotated[
        bool, typer.Option(help="Replace --out even if it holds something other than an index (never an input).")
    ] = False,
) -> None:
    """Build an index over report files: counts in / indexed / rejected by reason are printed and add up."""
    from rich.console import Console

    from assistant.commands.ingest_summary import exclusions, print_ingestion, write_rejects
    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import checked_corpus, read_settings
    from models.resolve import ModelNotAvailable
    from retriever.encoder import load_encoder
    from retriever.index import ReportIndex
    from retriever.ingest import ingest
    from retriever.output_paths import UnsafeOutput, check_outputs
    from retriever.sources import DEMO_NAMES

    console = Console(stderr=True)
    settings = read_settings(console)
    mapping = checked_corpus(console, corpus, column_map)
    target = out or settings.paths.default_index
    inputs = [Path(spec) for spec in corpus if spec not in DEMO_NAMES]
    try:  # before reading a single report: a wrong --out or --rejects costs nothing
        check_outputs(inputs, target, rejects, overwrite=overwrite)
    except UnsafeOutput as exc:
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    with console.status("reading reports"):
        result = ingest(corpus, exclusions(keep_incomplete, keep_duplicate_findings), mapping)
    print_ingestion(console, result)
    if rejects:
        write_rejects(console, rejects, result.rejections)
    if not result.reports:
        print_error(console, "nothing to index: every record was rejected (see the reasons above)")
        raise typer.Exit(1)

    try:
        model = load_encoder(encoder, backend=settings.encoder.backend, device=settings.encoder.device)
    except ModelNotAvailable as exc:
        print_error(console, exc)
        raise typer.Exit(1) from exc
    built = ReportIndex.build(result.reports, model, batch_size=batch_size, progress=True)
    try:
        built.save(target, overwrite=overwrite)
    except UnsafeOutput as exc:  # the folder changed while encoding
        print_error(console, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except OSError as exc:  # a full disk or a read-only folder: the previous index is kept (ReportIndex.save)
        print_error(console, f"could not write the index to {target}: {exc}; the previous index, if any, is unchanged")
        raise typer.Exit(1) from exc
    fields = ", ".join(f"{f}: {n}" for f, n in built.manifest.fields.items())
    console.print(literal(f"indexed {len(result.reports)} reports with {model.name} -> {target}", style="green"),
                  literal(f" ({fields})"))
