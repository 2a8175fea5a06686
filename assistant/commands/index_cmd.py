"""`assistant index`: ingest report files, encode them and write an index folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from models.paths import default_index_dir


def index(
    corpus: Annotated[list[str], typer.Argument(help="Report files or folders (CSV, JSONL, .txt), or `demo`.")],
    encoder: Annotated[
        str, typer.Option(help="Registry name (minilm, mpnet), trained model, path or hub id.")
    ] = "minilm",
    out: Annotated[Path | None, typer.Option(help="Index folder to write (default: the default index).")] = None,
    column_map: Annotated[
        str | None, typer.Option("--map", help="Column mapping, e.g. findings=Befund,impression=Beurteilung")
    ] = None,
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
) -> None:
    """Build an index over report files: counts in / indexed / rejected by reason are printed and add up."""
    from rich.console import Console
    from rich.table import Table

    from models.resolve import ModelNotAvailable
    from retriever.encoder import index_backend, load_encoder
    from retriever.index import ReportIndex
    from retriever.ingest import Exclusions, ingest
    from retriever.sources import ColumnMap

    console = Console(stderr=True)
    try:
        mapping = ColumnMap.parse(column_map)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--map") from exc
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
    for source, (kept, rejected) in result.by_source().items():
        table.add_row(source, str(kept + rejected), str(kept), str(rejected))
    console.print(table)
    if result.rejections:
        reasons = Table(title="Rejected, by reason")
        reasons.add_column("reason")
        reasons.add_column("records", justify="right")
        for reason, count in result.reasons().most_common():
            reasons.add_row(reason, str(count))
        console.print(reasons)
    if rejects:
        rejects.parent.mkdir(parents=True, exist_ok=True)
        with rejects.open("w", encoding="utf-8") as handle:
            for r in result.rejections:
                handle.write(
                    json.dumps({"source": r.source, "ref": r.ref, "reason": r.reason, "detail": r.detail}) + "\n"
                )
        console.print(f"rejections written to {rejects}")
    if not result.reports:
        console.print("[red]nothing to index: every record was rejected (see the reasons above)[/red]")
        raise typer.Exit(1)

    try:
        model = load_encoder(encoder, backend=index_backend())  # the fast path measured at equal quality
    except ModelNotAvailable as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    built = ReportIndex.build(result.reports, model, batch_size=batch_size, progress=True)
    target = out or default_index_dir()
    built.save(target)
    fields = ", ".join(f"{f}: {n}" for f, n in built.manifest.fields.items())
    console.print(f"[green]indexed {len(result.reports)} reports with {model.name} -> {target}[/green] ({fields})")
