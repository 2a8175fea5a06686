"""`assistant show ID`: one whole report from an index, as it was indexed, and with `--history` its earlier versions.

Why: search and ask print the top of each report, cut near 200 characters, often before the sentence that matched; a
resident who wants the rest needs the whole report one command away. An id may be given without its site (`A123` for
`north:A123`) where that accession is unique in the index; when several sites' studies share it, the matching ids
are printed. Reads the index's report store only (no encoder, no vectors), so it is quick. Exit codes: 0 shown, 2 no
such index or report, or an accession several reports share.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from rich.console import Console

    from retriever.reports.record import Report


def show(
    report_id: Annotated[
        str, typer.Argument(help="The report's id as search, ask and the chat print it, or its accession alone.")
    ],
    index: Annotated[Path | None, typer.Option(help="Index folder (default: the default index).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
    history: Annotated[
        bool, typer.Option("--history", help="Also print the earlier versions an update or a newer record replaced.")
    ] = False,
) -> None:
    """Print one whole report: id, source, study date, status, exam, metadata, findings, impression, addendum and the
    full text."""
    from rich.console import Console

    from assistant.commands.output import print_error
    from assistant.commands.shared import read_settings
    from retriever.index.manifest import Manifest
    from retriever.index.output_paths import build_hint, named_path
    from retriever.index.report_index import STORE_FILE
    from retriever.index.store import ReportStore

    err = Console(stderr=True)
    folder = named_path(index or read_settings(err).paths.default_index)
    try:
        Manifest.read(folder)
    except ValueError as exc:
        print_error(err, f"no index at {folder} ({exc}): build one with {build_hint(folder, 'REPORTS')}")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    store = ReportStore(folder / STORE_FILE)
    try:
        matches = store.ids_named([report_id])[report_id]
        if len(matches) > 1:
            print_error(err, f"{report_id!r} matches {len(matches)} reports in {folder}: {', '.join(matches)}")
            raise typer.Exit(EXIT_BAD_INPUT)
        found = matches[0] if matches else report_id
        rowid = store.rowids_of([found]).get(found)
        report = store.get([rowid])[rowid] if rowid is not None else None
        earlier = store.history(found) if history else []
    finally:
        store.close()
    if report is None and not earlier:
        print_error(err, f"no report {report_id!r} in {folder}: ids are printed by `assistant search` (source:id)")
        raise typer.Exit(EXIT_BAD_INPUT)
    if as_json:
        shown = asdict(report) if report is not None else {"id": found, "removed": True}
        if history:
            shown["history"] = [{"replaced": when, **asdict(version)} for when, version in earlier]
        typer.echo(json.dumps(shown, ensure_ascii=False, indent=2))
        return
    console = Console()
    if report is None:
        print_error(err, f"{found} is no longer in {folder} (removed); its earlier versions follow")
    else:
        _print_report(console, report)
    if history:
        _print_history(console, found, earlier)


def _print_report(console: Console, report: Report, title: str = "") -> None:
    """The report's facts on one line, then each of its texts in a panel."""
    from rich.panel import Panel

    from assistant.commands.output import literal

    facts = [
        f"source {report.source or '-'}",
        f"study date {report.meta.get('date') or '-'}",
        f"status {report.status or '-'}",
        f"modality {report.modality or '-'}",
        *(f"{name} {value}" for name, value in (("exam", report.exam), ("body part", report.body_part)) if value),
        *(f"{key} {value}" for key, value in report.meta.items() if key != "date"),
    ]
    if report.labels:
        facts.append("labels " + ", ".join(report.labels))
    console.print(literal(f"{title}{report.id}  ·  " + "  ·  ".join(facts), style="bold"))
    texts = (("Findings", report.findings), ("Impression", report.impression), ("Addendum", report.addendum))
    for name, text in texts:
        if text.strip():
            console.print(Panel(literal(text.strip()), title=name, title_align="left"))
    if report.full_text.strip() and report.full_text.strip() not in (
        report.findings.strip(),
        report.impression.strip(),
    ):
        console.print(Panel(literal(report.full_text.strip()), title="Whole report", title_align="left"))


def _print_history(console: Console, report_id: str, earlier: list[tuple[str, Report]]) -> None:
    """The earlier versions, newest first, each with when it was replaced."""
    from assistant.commands.output import literal

    if not earlier:
        console.print(literal(f"history: no earlier version of {report_id} is kept", style="dim"))
        return
    console.print(literal(f"history: {len(earlier)} earlier version(s) of {report_id}, newest first", style="dim"))
    for when, version in reversed(earlier):
        _print_report(console, version, title=f"[replaced {when}] " if when else "[replaced] ")
