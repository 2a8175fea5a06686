"""`assistant feedback`: residents' verdicts on answers, and the site's own benchmark made from them.

    assistant feedback last --not-helpful --right "empyema"   # judge `assistant ask`'s last answer
    assistant feedback export --out cases.jsonl               # the entries as diagnosis benchmark cases
    assistant feedback stats                                  # agreement with the answers, by configuration hash

The chat stores its residents' verdicts in the same file (assistant/feedback/store.py, under RADSEARCH_HOME); nothing
is sent anywhere. The export holds what residents typed (findings, the right diagnosis, comments).
"""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.output import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.feedback.store import FeedbackStore

app = typer.Typer(
    help="Residents' feedback: judge ask's last answer, export the site's benchmark cases, agreement by configuration.",
    no_args_is_help=True,
    add_completion=False,
)
BENCHMARK_HINT = "python -m eval.diagnosis.benchmark --cases {out} --corpus <the site's report export> --conditions ..."


def _store(err: Console) -> FeedbackStore:
    """The feedback file of this data folder (RADSEARCH_HOME, or RADSEARCH_FEEDBACK); exit 2 for a bad data folder."""
    from assistant.commands.output import print_error
    from assistant.feedback.store import FeedbackStore
    from models.paths import DataPaths

    try:
        return FeedbackStore.at(DataPaths.from_env(os.environ), os.environ)
    except ValueError as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc


def last(
    helpful: Annotated[
        bool | None, typer.Option("--helpful/--not-helpful", help="Whether the answer helped.", show_default=False)
    ] = None,
    right: Annotated[str, typer.Option("--right", help="The right diagnosis, in your words.")] = "",
    comment: Annotated[str, typer.Option(help="Anything else about the answer (no patient identifiers).")] = "",
) -> None:
    """Judge the last answer `assistant ask` gave you (this user's, on this data folder)."""
    from rich.console import Console

    from assistant.commands.output import literal, print_error
    from assistant.feedback.store import FeedbackError, Verdict

    err = Console(stderr=True)
    store = _store(err)
    answered = store.last(getpass.getuser())
    if answered is None:
        print_error(err, "no answer to judge yet: ask first (assistant ask 'FINDINGS')")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        entry = store.record(answered, Verdict(helpful, right, comment))
    except FeedbackError as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    said = answered.diagnosis or "no diagnosis"
    err.print(literal(f"feedback {entry} stored for the answer “{said}” to “{answered.question}” ({store.path})"))


def export(
    out: Annotated[Path, typer.Option("--out", help="The cases file to write (JSONL, the diagnosis benchmark's).")],
) -> None:
    """Write every entry with a reference diagnosis as a case of the diagnosis benchmark."""
    from rich.console import Console

    from assistant.commands.output import literal, print_error, print_note
    from assistant.feedback.cases import write_cases

    err = Console(stderr=True)
    entries = _store(err).entries()
    if not entries:
        print_error(err, "no feedback stored yet: residents give it in the chat, or with `assistant feedback last`")
        raise typer.Exit(EXIT_BAD_INPUT)
    written, skipped = write_cases(entries, out)
    err.print(literal(f"{written} case(s) written to {out}; they hold what residents typed: keep them on site"))
    for left in skipped:
        print_note(err, f"feedback {left.id} left out: {left.reason}")
    if written:
        err.print(literal("benchmark them: " + BENCHMARK_HINT.format(out=out), style="dim"))


def stats(as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False) -> None:
    """Residents' agreement with the answers, by configuration hash."""
    from rich.console import Console
    from rich.table import Table

    from assistant.commands.output import literal
    from assistant.feedback.stats import agreement_by_configuration

    err = Console(stderr=True)
    rows = agreement_by_configuration(_store(err).entries())
    if as_json:
        data = [{**row.__dict__, "users": len(row.users), "rate": row.rate} for row in rows]
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return
    if not rows:
        err.print("no feedback stored yet")
        return
    table = Table(title="agreement with the answers, by configuration")
    for column in ("configuration", "what", "feedback", "helpful", "not helpful", "corrected", "agreement", "users"):
        table.add_column(column, overflow="fold")
    for row in rows:
        rate = f"{row.agreed}/{row.judged} ({row.rate:.0%})" if row.rate is not None else "-"
        counts = (row.entries, row.helpful, row.not_helpful, row.corrected)
        table.add_row(row.configuration_hash, literal(row.label), *map(str, counts), rate, str(len(row.users)))
    Console().print(table)


app.command("last")(last)
app.command("export")(export)
app.command("stats")(stats)
