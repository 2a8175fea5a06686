"""What `assistant ask` prints, in the order it becomes known: the retrieved reports and what they affirm (in about a
second), the model's answer as it is written (a CPU model can take minutes), then the checked answer.

The checked answer is printed apart from the draft because it can differ: the pipeline replaces a diagnosis the
findings or its own reports rule out (assistant/rag/grounding.py). Model and report text go in as `Text`, so rich
shows it as written (see assistant.commands.output).
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assistant.commands.output import (
    EXIT_BAD_INPUT,
    contradiction_marks,
    literal,
    marked,
    print_error,
    print_note,
    visible,
)
from assistant.excerpt import matching_excerpt, searched_text
from assistant.rag.answer import UnparseableOutput, parse_output
from assistant.rag.answer_defaults import SHOWN_REPORTS
from assistant.rag.events import encode
from assistant.rag.knowledge_line import knowledge_line
from assistant.rag.strength import strength_line
from assistant.readable import modality_word, strengths
from assistant.text import shorten

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assistant.rag.answer import Answer
    from assistant.rag.assemble import Output
    from assistant.rag.events import Event
    from assistant.rag.pipeline import Retrieval
    from retriever.search.hit import Hit

SHOW_HINT = "whole report: assistant show ID"
#: `ask`'s exit code when the answer is retrieval-only: the model was down, too slow, or wrote no answer.
EXIT_CODES = {"backend_unavailable": 3, "timeout": 4, "unparseable": 5}
#: `ask`'s exit code when a warm server stopped before its answer was complete.
EXIT_SERVER_GONE = 1
IMPRESSION_CHARS = 200


def print_retrieval(retrieval: Retrieval, query: str, out: Console) -> None:
    """The retrieved reports (rank, strength, the sentence that matched with the query's words marked), the notes on
    contradicting ones, then the evidence differential."""
    reports = retrieval.retrieved[:SHOWN_REPORTS]
    if reports:
        marks, notes = contradiction_marks([(h.contradicts, h.partly_contradicts) for h in reports])
        columns = ["#", "match", "report", "modality", "study date, status", "matching sentence", "score"]
        if marks:
            columns.insert(5, "contradicts")
        read = len(retrieval.retrieved)
        shown = f"the first {len(reports)} of {read}" if read > len(reports) else f"{read}"
        table = Table(title=f"{shown} similar reports ({SHOW_HINT})", show_lines=True)
        for column in columns:
            table.add_column(column, overflow="fold", style="bold red" if column == "contradicts" else "")
        for n, (h, strength) in enumerate(zip(reports, strengths([h.score for h in reports]), strict=True)):
            cells: list[str | Text] = [
                str(h.rank),
                strength.removesuffix(" match"),
                literal(h.report.id),
                literal(modality_word(h.report.modality)),
                literal(f"{h.report.meta.get('date') or '-'}, {h.report.status or '-'}"),
                _sentence_cell(h, query, out),
                f"{h.score:.3f}",
            ]
            if marks:
                cells.insert(5, marks[n])
            table.add_row(*cells)
        out.print(table)
        for note in notes:
            print_note(out, note)
        if read > len(reports):
            print_note(out, f"the other {read - len(reports)} are read by the evidence below (--json lists them all)")
    if retrieval.evidence.get("candidates"):
        print_evidence(retrieval.evidence, out)


def _sentence_cell(hit: Hit, query: str, out: Console) -> Text:
    """The sentence that matched, marked; below it the impression when another part of the report matched (the
    conclusion is what the evidence differential reads)."""
    report, shown = hit.report, hit.report.shown_impression
    cell = marked(matching_excerpt(searched_text(hit.field, report.findings, shown), query), out)
    if hit.field != "impression" and shown.strip():
        cell.append("\nimpression: " + shorten(" ".join(shown.split()), IMPRESSION_CHARS), style="dim")
    return cell


def print_evidence(evidence: dict, out: Console, chosen: str | None = None) -> None:
    """The evidence differential (assistant/rag/evidence.py): each diagnosis the similar reports affirm, how many of
    them do, and which."""
    table = Table(title=f"what the {evidence['read']} most similar reports affirm", show_lines=False)
    for column in ("#", "diagnosis", "reports", "report ids"):
        table.add_column(column, overflow="fold")
    for n, candidate in enumerate(evidence["candidates"], start=1):
        table.add_row(
            str(n),
            literal(candidate["diagnosis"], style="bold" if candidate["diagnosis"] == chosen else ""),
            f"{candidate['count']} of {evidence['read']}",
            literal(", ".join(candidate["report_ids"][:6])),
        )
    out.print(table)


def draft_text(generated: str) -> str:
    """The model's (possibly unfinished) JSON answer as plain lines, "" until a diagnosis can be read from it."""
    try:
        parsed = parse_output(generated)
    except UnparseableOutput:
        return ""
    lines = [f"diagnosis: {parsed.diagnosis}"]
    if parsed.differential:
        lines.append("differential: " + "; ".join(parsed.differential))
    if parsed.rationale and parsed.mode != "plain_text":
        lines.append(f"rationale: {parsed.rationale}")
    return "\n".join(lines)


class DraftPrinter:
    """Prints the model's answer while it is generated: each piece extends what is shown. The JSON the model writes
    is shown as plain lines (`draft_text`); when a new piece rewrites an earlier line instead of extending it (a
    repaired partial object read otherwise), nothing is printed until the text extends what is shown again."""

    def __init__(self, out: Console, model: str) -> None:
        self.out = out
        self.model = model
        self.generated = ""
        self.shown = ""

    def feed(self, piece: str) -> None:
        if not self.generated:
            self.out.print(literal(f"{self.model} is writing (checked below):", style="dim"))
        self.generated += piece
        text = draft_text(self.generated)
        if text.startswith(self.shown) and len(text) > len(self.shown):
            self.out.print(literal(text[len(self.shown) :]), end="", soft_wrap=True)
            self.shown = text

    def close(self) -> None:
        """End the draft's last line (when anything was printed)."""
        if self.generated:
            self.out.print()


def print_answer(answer: Answer, out: Console) -> None:
    """The checked answer (or why there is none), the reports it cites, notes and provenance."""
    if answer.no_diagnosis:
        body = Text.assemble(("No diagnosis", "bold"), visible(f": {answer.degraded_reason or ''}"))
        out.print(Panel(body, title="no diagnosis", border_style="yellow"))
    elif answer.degraded:
        body = Text.assemble(
            ("No LLM answer", "bold"),
            visible(f" ({answer.degraded_kind}): {answer.degraded_reason or ''}\n"),
            "Retrieval-only result: the most similar reports are above.",
        )
        out.print(Panel(body, title="degraded", border_style="red"))
    else:
        lines = [Text.assemble(("Most likely diagnosis: ", "bold"), visible(answer.diagnosis or ""))]
        if answer.strength:
            lines.append(Text(visible(strength_line(answer.strength))))
        if answer.model_knowledge:
            lines.append(Text(visible(knowledge_line(answer.model_knowledge)), style="italic"))
        if answer.differential:
            lines.append(Text.assemble(("Differential: ", "bold"), visible("; ".join(answer.differential))))
        if answer.rationale:
            lines.append(Text.assemble(("Rationale: ", "bold"), visible(answer.rationale)))
        if answer.cited_report_ids:
            lines.append(Text.assemble(("Cites: ", "bold"), visible(", ".join(answer.cited_report_ids))))
        out.print(Panel(Text("\n").join(lines), title="answer", border_style="green"))
    for note in answer.notes:
        print_note(out, note)
    timing = ", ".join(f"{name} {value:.2f}" for name, value in answer.timings.items())
    out.print(literal(f"model {answer.model_id or '-'} · prompt {answer.prompt_id} · {timing}", style="dim"))
    out.print("[dim]Decision support and teaching aid, not a diagnosis.[/dim]")


def print_events(items: Iterator[Event], query: str, output: Output, err: Console) -> int:
    """Print an answer's events as `ask` shows them (`show_events`), then the whole answer for `--json` or
    `--markdown`; the exit code. Whoever answers (this process, or a warm server through
    assistant/commands/ask_warm.py) is printed alike."""
    from assistant.warm.client import WarmError

    try:
        answer = show_events(items, query, err, output == "stream")
    except WarmError as exc:  # the server refused the question as bad input (a missing index...)
        print_error(err, exc)
        return EXIT_BAD_INPUT
    except ConnectionError as exc:  # the warm server stopped mid-answer
        print_error(err, f"{exc}; ask again, or with --no-server to answer in this process")
        return EXIT_SERVER_GONE
    remember(answer, query, err)
    if output == "json":
        print(json.dumps(encode(answer)["answer"], ensure_ascii=False, indent=2))  # the one codec's payload
    elif output == "markdown":
        from assistant.chat.export import answer_document

        print(answer_document(answer), end="")
    return EXIT_CODES.get(answer.degraded_kind or "", 0)


def remember(answer: Answer, query: str, err: Console) -> None:
    """Keep the answer as this user's last, for `assistant feedback last` (assistant/feedback/store.py, under the data
    folder); a failure to write it is a note, never ask's failure."""
    import getpass
    import os
    import sqlite3

    from assistant.feedback.store import Answered, FeedbackStore, index_label
    from models.paths import DataPaths

    answered = Answered(query, query, answer.to_dict(), index_label(answer.configuration), "ask")
    try:
        FeedbackStore.at(DataPaths.from_env(os.environ), os.environ).remember_last(getpass.getuser(), answered)
    except (OSError, sqlite3.Error, ValueError) as exc:
        print_note(err, f"the answer was not kept for `assistant feedback last`: {exc}")


def show_events(items: Iterator[Event], query: str, err: Console, streaming: bool) -> Answer:
    """Print each part as soon as it is known: notices on stderr, the reports and their evidence, the model's answer
    while it is written, then the checked answer; without `streaming` (--json, --markdown) only the notices, and the
    Answer is returned for printing whole. A spinner on stderr covers the waits, and is stopped before anything is
    printed so the two never interleave on a terminal. ConnectionError when the events end before the answer."""
    from assistant.rag.answer import Answer, Retrieval
    from assistant.rag.events import Note, Start

    # Not a terminal (piped, a log): rich would assume 80 columns and fold every cell (as `assistant search`).
    out = Console(width=shutil.get_terminal_size(fallback=(150, 40)).columns)
    draft, model, evidence_only = DraftPrinter(out, ""), "", True
    status = err.status(literal("searching the similar reports ..."))
    if streaming:
        status.start()
    try:
        for item in items:
            status.stop()
            if isinstance(item, Answer):
                if streaming:
                    draft.close()
                    print_answer(item, out)
                return item
            if isinstance(item, Start):
                model, evidence_only = item.model_label, item.evidence_only
                draft = DraftPrinter(out, model)
            elif isinstance(item, Note):
                print_note(err, item.text)
            elif isinstance(item, Retrieval):
                print_retrieval(item, query, out)
                if not evidence_only:
                    status.update(literal(f"asking {model} ..."))
                    status.start()
            else:
                draft.feed(item)
            if streaming and isinstance(item, Start | Note):
                status.start()
    finally:
        status.stop()
    raise ConnectionError("the answer ended before it was complete")
