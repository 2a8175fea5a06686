"""What `assistant index` and `assistant update` both print and write about ingestion: the counts table (records in
= indexed + rejected, per source), the rejections by reason, and the rejects log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from retriever.reports.ingest import Exclusions, IngestResult
    from retriever.reports.sources import Rejection


def exclusions(keep_incomplete: bool, keep_duplicate_findings: bool) -> Exclusions:
    """The exclusions the two commands' flags ask for (the paper's by default)."""
    from retriever.reports.ingest import Exclusions

    return Exclusions(
        require_findings=not keep_incomplete,
        require_impression=not keep_incomplete,
        drop_duplicate_findings=not keep_duplicate_findings,
    )


def print_ingestion(console: Console, result: IngestResult) -> None:
    """The per-source counts and, if any, the rejections by reason (source names come from file names: literal)."""
    from rich.table import Table

    from assistant.commands.output import literal

    table = Table(title="Ingestion", show_footer=True)
    table.add_column("source", footer="total")
    table.add_column("records in", justify="right", footer=str(result.records_in))
    table.add_column("indexed", justify="right", footer=str(result.kept))
    table.add_column("rejected", justify="right", footer=str(len(result.rejections)))
    for source, (kept, rejected) in result.by_source().items():
        table.add_row(literal(source), str(kept + rejected), str(kept), str(rejected))
    console.print(table)
    if result.rejections:
        reasons = Table(title="Rejected, by reason")
        reasons.add_column("reason")
        reasons.add_column("records", justify="right")
        for reason, count in result.reasons().most_common():
            reasons.add_row(literal(reason), str(count))
        console.print(reasons)


def write_rejects(console: Console, path: Path, rejections: list[Rejection]) -> None:
    """Every rejected record and its reason as JSONL, written atomically."""
    from assistant.commands.output import literal
    from models.atomic import write_atomic

    write_atomic(
        path,
        "".join(
            json.dumps({"source": r.source, "ref": r.ref, "reason": r.reason, "detail": r.detail}) + "\n"
            for r in rejections
        ),
    )
    console.print(literal(f"rejections written to {path}"))
