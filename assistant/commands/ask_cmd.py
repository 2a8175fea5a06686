"""`assistant ask`: a finding in, the most likely diagnosis out, with the reports it rests on.

Exit codes say what happened, so scripts can tell a real answer from a fallback: 0 answer, 2 bad input (empty
query, missing index, bad flag), 3 backend down (retrieval-only result printed), 4 backend timeout
(retrieval-only result printed), 5 the model's output held no answer (retrieval-only result printed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT, FIELD_HELP, BackendOption, ModelOption, RerankerOption
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.rag.answer import Answer

EXIT_CODES = {"backend_unavailable": 3, "timeout": 4, "unparseable": 5}


def ask(
    query: Annotated[str, typer.Argument(help="Finding text, e.g. 'blunting of the right costophrenic angle'.")],
    no_retrieval: Annotated[bool, typer.Option("--no-retrieval", help="Ask the LLM alone (baseline).")] = False,
    encoder: Annotated[
        str | None, typer.Option(help="Encoder to search with; must be the one that built the index.")
    ] = None,
    k: Annotated[
        int,
        typer.Option("-k", "--k", min=1, max=20, help="Reports retrieved; the evidence differential reads them all."),
    ] = answer_defaults.K,
    prompt: Annotated[
        str,
        typer.Option(
            help="How the answer is made: diagnosis_evidence (the model chooses among what similar reports affirm), "
            "evidence (no model: the best-supported diagnosis), or another prompts/ name such as diagnosis_rag "
            "(free text from the reports)."
        ),
    ] = answer_defaults.PROMPT,
    field: Annotated[str, typer.Option(help=FIELD_HELP)] = answer_defaults.FIELD,
    method: Annotated[
        str,
        typer.Option(
            help="Retrieval: dense (the index's encoder), bm25, hybrid (rank fusion of both) or hybrid-weighted."
        ),
    ] = DEFAULT_METHOD,
    index: Annotated[Path | None, typer.Option(help="Index folder (default: the demo/default index).")] = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    reranker: RerankerOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Answer as JSON.")] = False,
) -> None:
    """Answer a finding with the most likely diagnosis, grounded in retrieved reports."""
    from rich.console import Console

    from assistant.commands.output import literal, print_error, print_note
    from assistant.commands.shared import read_settings
    from assistant.llm_factory import make_llm
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.pipeline import RagPipeline
    from models.resolve import ModelNotAvailable
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import IndexLoadError, ReportIndex
    from retriever.search.query import EmptyQueryError, clean_query

    err = Console(stderr=True)
    settings = read_settings(err)
    try:
        clean_query(query)
        llm_settings = settings.llm.with_flags(backend=backend, model=model)
        retriever = None
        if not no_retrieval:
            folder = named_path(index or settings.paths.default_index)
            idx = ReportIndex.load(folder, encoder, device=settings.encoder.device)
            for note in idx.notices(folder, method):
                print_note(err, note)
            if field not in idx.fields:
                raise ValueError(f"field {field!r} is not in this index; it has: {', '.join(idx.fields)}")
            idx.reranker = settings.search.load_reranker(reranker)
            retriever = ReportRetriever(index=idx, field=field, k=k, method=method)
        pipeline = RagPipeline(make_llm(llm_settings, settings.paths), retriever, rag_prompt=prompt)
        if as_json:
            answer = pipeline.invoke(query)
        else:
            asking = (
                "reading the similar reports ..."
                if pipeline.evidence_only
                else f"asking {llm_settings.backend} model {llm_settings.model or '(server default)'} ..."
            )
            with err.status(literal(asking)):
                answer = pipeline.invoke(query)
    except (EmptyQueryError, IndexLoadError, ModelNotAvailable, ValueError) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if as_json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print(answer, Console())
    code = EXIT_CODES.get(answer.degraded_kind or "", 0)
    if code:
        raise typer.Exit(code)


def _print(answer: Answer, out: Console) -> None:
    """Diagnosis panel, then the reports (cited ones marked), then notes and provenance. Model and report text
    go in as `Text`, so rich shows it as written (see assistant.commands.output)."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from assistant.commands.output import literal, print_note, visible
    from assistant.commands.search_cmd import contradiction_marks
    from assistant.text import shorten

    if answer.degraded and answer.degraded_kind in ("no_evidence", "ruled_out"):
        body = Text.assemble(("No diagnosis", "bold"), visible(f": {answer.degraded_reason or ''}"))
        out.print(Panel(body, title="no diagnosis", border_style="yellow"))
    elif answer.degraded:
        body = Text.assemble(
            ("No LLM answer", "bold"),
            visible(f" ({answer.degraded_kind}): {answer.degraded_reason or ''}\n"),
            "Retrieval-only result: the impressions of the most similar reports are below.",
        )
        out.print(Panel(body, title="degraded", border_style="red"))
    else:
        lines = [Text.assemble(("Most likely diagnosis: ", "bold"), visible(answer.diagnosis or ""))]
        if answer.differential:
            lines.append(Text.assemble(("Differential: ", "bold"), visible("; ".join(answer.differential))))
        if answer.rationale:
            lines.append(Text.assemble(("Rationale: ", "bold"), visible(answer.rationale)))
        out.print(Panel(Text("\n").join(lines), title="answer", border_style="green"))
    if answer.evidence.get("candidates"):
        _print_evidence(answer, out)
    if answer.retrieved:
        # A report that says the opposite of the query is marked as in `assistant search` (column only when needed).
        marks, notes = contradiction_marks([(r.contradicts, r.partly_contradicts) for r in answer.retrieved])
        columns = ["#", "score", "report", "cited", "impression"]
        if marks:
            columns.insert(4, "contradicts")
        table = Table(title="retrieved reports", show_lines=True)
        for column in columns:
            table.add_column(column, overflow="fold", style="bold red" if column == "contradicts" else "")
        for n, r in enumerate(answer.retrieved):
            cited = "yes" if r.report_id in answer.cited_report_ids else ""
            cells = [str(r.rank), f"{r.score:.3f}", literal(r.report_id), cited, literal(shorten(r.impression, 300))]
            if marks:
                cells.insert(4, marks[n])
            table.add_row(*cells)
        out.print(table)
        for note in notes:
            print_note(out, note)
    for note in answer.notes:
        print_note(out, note)
    timing = ", ".join(f"{name} {value:.2f}" for name, value in answer.timings.items())
    out.print(literal(f"model {answer.model_id or '-'} · prompt {answer.prompt_id} · {timing}", style="dim"))
    out.print("[dim]Decision support and teaching aid, not a diagnosis.[/dim]")


def _print_evidence(answer: Answer, out: Console) -> None:
    """The evidence differential (assistant/rag/evidence.py): each diagnosis the similar reports affirm, how many of
    them do, and which."""
    from rich.table import Table

    from assistant.commands.output import literal

    evidence = answer.evidence
    table = Table(title=f"what the {evidence['read']} most similar reports affirm", show_lines=False)
    for column in ("#", "diagnosis", "reports", "report ids"):
        table.add_column(column, overflow="fold")
    for n, candidate in enumerate(evidence["candidates"], start=1):
        chosen = candidate["diagnosis"] == answer.diagnosis
        table.add_row(
            str(n),
            literal(candidate["diagnosis"], style="bold" if chosen else ""),
            f"{candidate['count']} of {evidence['read']}",
            literal(", ".join(candidate["report_ids"][:6])),
        )
    out.print(table)
