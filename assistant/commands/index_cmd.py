"""`assistant index`: ingest report files, encode them and write an index folder.

Exit codes: 0 indexed, 1 nothing to index or encoder unavailable, 2 bad input (an output that would replace an input
or a folder that is not an index, a bad option value).
"""

from __future__ import annotations

import json
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
    from rich.table import Table

    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import checked_corpus, read_settings
    from models.resolve import ModelNotAvailable
    from retriever.atomic import write_atomic
    from retriever.encoder import load_encoder
    from retriever.index import ReportIndex
    from retriever.ingest import Exclusions, ingest
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
    exclusions = Exclusions(
        require_findings=not keep_incomplete,
        require_impression=not keep_incomplete,
        drop_duplicate_findings=not keep_duplicate_findings,
    )
    with console.status("reading reports"):
        result = ingest(corpus, exclusions, mapping)

    table = Table(title="Ingestion", show_footer=True)
    table.add_column("source", footer="total")
    table.add_column("records in", justify="right", footer=str(result.records_in))
    table.add_column("indexed", justify="right", footer=str(len(result.reports)))
    table.add_column("rejected", justify="right", footer=str(len(result.rejections)))
    for source, (kept, rejected) in result.by_source().items():  # source names come from file names: literal
        table.add_row(literal(source), str(kept + rejected), str(kept), str(rejected))
    console.print(table)
    if result.rejections:
        reasons = Table(title="Rejected, by reason")
        reasons.add_column("reason")
        reasons.add_column("records", justify="right")
        for reason, count in result.reasons().most_common():
            reasons.add_row(literal(reason), str(count))
        console.print(reasons)
    if rejects:
        write_atomic(
            rejects,
            "".join(
                json.dumps({"source": r.source, "ref": r.ref, "reason": r.reason, "detail": r.detail}) + "\n"
                for r in result.rejections
            ),
        )
        console.print(literal(f"rejections written to {rejects}"))
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
