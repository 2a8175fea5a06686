"""`assistant show ID`: one whole report from an index, as it was indexed.

Why: search and ask print the top of each report, cut near 200 characters, often before the sentence that matched; a
resident who wants the rest needs the whole report one command away. Reads the index's report store only (no
encoder, no vectors), so it is quick. Exit codes: 0 shown, 2 no such index or report.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT


def show(
    report_id: Annotated[str, typer.Argument(help="The report's id, as search, ask and the chat print it.")],
    index: Annotated[Path | None, typer.Option(help="Index folder (default: the default index).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
) -> None:
    """Print one whole report: id, source, modality, metadata, findings, impression and the full text."""
    from rich.console import Console
    from rich.panel import Panel

    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import read_settings
    from retriever.index.manifest import Manifest
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import STORE_FILE
    from retriever.index.store import ReportStore

    err = Console(stderr=True)
    folder = named_path(index or read_settings(err).paths.default_index)
    try:
        Manifest.read(folder)
    except ValueError as exc:
        print_error(err, f"no index at {folder} ({exc}): build one with `assistant index REPORTS --out {folder}`")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    store = ReportStore(folder / STORE_FILE)
    try:
        rowid = store.rowids_of([report_id]).get(report_id)
        report = store.get([rowid])[rowid] if rowid is not None else None
    finally:
        store.close()
    if report is None:
        print_error(err, f"no report {report_id!r} in {folder}: ids are printed by `assistant search` (source:id)")
        raise typer.Exit(EXIT_BAD_INPUT)
    if as_json:
        typer.echo(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        return
    console = Console()
    facts = [
        f"source {report.source or '-'}",
        f"modality {report.modality or '-'}",
        *(f"{key} {value}" for key, value in report.meta.items()),
    ]
    if report.labels:
        facts.append("labels " + ", ".join(report.labels))
    console.print(literal(f"{report.id}  ·  " + "  ·  ".join(facts), style="bold"))
    for title, text in (("Findings", report.findings), ("Impression", report.impression)):
        if text.strip():
            console.print(Panel(literal(text.strip()), title=title, title_align="left"))
    if report.full_text.strip() and report.full_text.strip() not in (
        report.findings.strip(),
        report.impression.strip(),
    ):
        console.print(Panel(literal(report.full_text.strip()), title="Whole report", title_align="left"))
