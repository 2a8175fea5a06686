"""What `assistant index` and `assistant update` both print and write about ingestion: the counts table (records in
= indexed + rejected, per source), the rejections by reason, the study dates not read or read by convention, and
the rejects log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from retriever.reports.ingest import Exclusions, IngestResult
    from retriever.reports.sources import Rejection


#: A source (file) of fewer records is never called mostly rejected: one unreadable stray file is reported, not fatal.
MIN_RECORDS = 10


def mostly_rejected(result: IngestResult, share: float) -> list[str]:
    """One line per source of at least MIN_RECORDS records with more than `share` of them rejected, naming its most
    common reason (which, for a table read with the wrong columns, names the --map that would read it)."""
    from collections import Counter

    found = []
    for source, (kept, rejected) in result.by_source().items():
        total = kept + rejected
        if total >= MIN_RECORDS and rejected > share * total:
            reason, _ = Counter(r.reason for r in result.rejections if r.source == source).most_common(1)[0]
            found.append(f"{source}: {rejected} of {total} records rejected, most for: {reason}")
    return found


def refuse_if_mostly_rejected(console: Console, result: IngestResult, share: float) -> None:
    """Exit 2 (nothing written) when a source is mostly rejected: an index of a few rows of a misread export would
    otherwise replace a good one with exit 0."""
    import typer

    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import EXIT_BAD_INPUT

    offenders = mostly_rejected(result, share)
    if not offenders:
        return
    for line in offenders:
        print_error(console, line)
    console.print(
        literal(
            f"nothing was written: more than {share:.0%} of a file's records were rejected. Fix the "
            "file or its --map (see the reason), or pass --max-rejected 1 to index what is readable.",
            style="yellow",
        )
    )
    raise typer.Exit(EXIT_BAD_INPUT)


def exclusions(keep_incomplete: bool, keep_duplicate_findings: bool) -> Exclusions:
    """The exclusions the two commands' flags ask for: the paper's incomplete reports dropped by default, every
    study kept (its findings may repeat another's: templated normal reports) unless told to drop them."""
    from retriever.reports.ingest import Exclusions

    return Exclusions(
        require_findings=not keep_incomplete,
        require_impression=not keep_incomplete,
        drop_duplicate_findings=not keep_duplicate_findings,
    )


def print_ingestion(console: Console, result: IngestResult) -> None:
    """The per-source counts and, if any, the rejections by reason and the reports whose study date was not read or
    was read by convention (source names come from file names: literal)."""
    from rich.table import Table

    from assistant.commands.output import literal

    table = Table(
        title="Ingestion",
        show_footer=True,
        caption="earlier versions: records of a study a newer record replaced (kept in the index's history)"
        if result.earlier
        else None,
    )
    table.add_column("source", footer="total")
    table.add_column("records in", justify="right", footer=str(result.records_in))
    table.add_column("indexed", justify="right", footer=str(result.kept))
    if result.earlier:
        table.add_column("earlier versions", justify="right", footer=str(result.earlier.total()))
    table.add_column("rejected", justify="right", footer=str(len(result.rejections)))
    for source, (kept, rejected) in result.by_source().items():
        earlier = [str(result.earlier[source])] if result.earlier else []
        table.add_row(
            literal(source), str(kept + rejected + result.earlier[source]), str(kept), *earlier, str(rejected)
        )
    console.print(table)
    if result.rejections:
        reasons = Table(title="Rejected, by reason")
        reasons.add_column("reason")
        reasons.add_column("records", justify="right")
        for reason, count in result.reasons().most_common():
            reasons.add_row(literal(reason), str(count))
        console.print(reasons)
    if noted := [(source, note, count) for (source, note), count in sorted(result.date_notes.items()) if count > 0]:
        dates = Table(
            title="Study dates (indexed all the same)",
            caption="each report keeps the date as written in its meta (date_original); --since and --until leave "
            "out the reports whose date was not read",
        )
        dates.add_column("source")
        dates.add_column("reports", justify="right")
        dates.add_column("date")
        for source, note, count in noted:
            dates.add_row(literal(source), str(count), literal(note))
        console.print(dates)


def write_rejects(console: Console, path: Path, rejections: list[Rejection]) -> None:
    """Every rejected record, its reason and the record itself as read (`row`, when it was read as one) as JSONL,
    written atomically: fix the rows and import them again."""
    from assistant.commands.output import literal
    from models.atomic import write_atomic

    write_atomic(
        path,
        "".join(
            json.dumps(
                {"source": r.source, "ref": r.ref, "reason": r.reason, "detail": r.detail}
                | ({"row": r.row} if r.row is not None else {}),
                ensure_ascii=False,
            )
            + "\n"
            for r in rejections
        ),
    )
    console.print(literal(f"rejections written to {path}"))
