"""`assistant ask`: a finding in, the most likely diagnosis out, with the reports it rests on.

Exit codes say what happened, so scripts can tell a real answer from a fallback: 0 answer, 2 bad input (empty
query, missing index, bad flag), 3 backend down (retrieval-only result printed), 4 backend timeout
(retrieval-only result printed), 5 the model's output held no answer (retrieval-only result printed).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.shared import (
    EXIT_BAD_INPUT,
    FIELD_HELP,
    BackendOption,
    ModelOption,
    RerankerOption,
    SinceOption,
    UntilOption,
)
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from assistant.rag.answer import Answer
    from assistant.rag.pipeline import RagPipeline

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
    since: SinceOption = None,
    until: UntilOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    reranker: RerankerOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Answer as JSON.")] = False,
    as_markdown: Annotated[
        bool,
        typer.Option("--markdown", help="Print the answer as a Markdown document with its reports and configuration."),
    ] = False,
) -> None:
    """Answer a finding with the most likely diagnosis, grounded in retrieved reports."""
    from rich.console import Console

    from assistant.commands.output import print_error, print_note
    from assistant.commands.shared import read_settings
    from assistant.llm_factory import make_llm
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.pipeline import RagPipeline
    from models.resolve import ModelNotAvailable
    from retriever.index.output_paths import named_path
    from retriever.index.report_index import IndexLoadError, ReportIndex, SearchFilters
    from retriever.search.query import EmptyQueryError, clean_query

    err = Console(stderr=True)
    if as_json and as_markdown:
        print_error(err, "--json and --markdown each print the whole answer: choose one")
        raise typer.Exit(EXIT_BAD_INPUT)
    settings = read_settings(err)
    try:
        clean_query(query)
        llm_settings = settings.llm.with_flags(backend=backend, model=model)
        retriever = None
        filters = SearchFilters(since=since, until=until)
        if no_retrieval and filters.any():
            raise ValueError("--since and --until choose the reports retrieved: they need retrieval")
        if not no_retrieval:
            folder = named_path(index or settings.paths.default_index)
            idx = ReportIndex.load(folder, encoder, device=settings.encoder.device)
            for note in idx.notices(folder, method):
                print_note(err, note)
            if field not in idx.fields:
                raise ValueError(f"field {field!r} is not in this index; it has: {', '.join(idx.fields)}")
            idx.reranker = settings.search.load_reranker(reranker)
            retriever = ReportRetriever(index=idx, field=field, k=k, method=method, filters=filters)
        pipeline = RagPipeline(make_llm(llm_settings, settings.paths), retriever, rag_prompt=prompt)
        if as_json or as_markdown:
            answer = pipeline.invoke(query)
        else:
            answer = _stream(
                pipeline, query, f"{llm_settings.backend} model {llm_settings.model or '(server default)'}"
            )
    except (EmptyQueryError, IndexLoadError, ModelNotAvailable, ValueError) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if as_json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    elif as_markdown:
        from assistant.chat.export import answer_document

        print(answer_document(answer), end="")
    code = EXIT_CODES.get(answer.degraded_kind or "", 0)
    if code:
        raise typer.Exit(code)


def _stream(pipeline: RagPipeline, query: str, model: str) -> Answer:
    """Print each part as soon as it is known (assistant/commands/ask_output.py): the reports and their evidence,
    the model's answer while it is written, then the checked answer. A spinner on stderr covers the waits, and is
    stopped before anything is printed so the two never interleave on a terminal."""
    from rich.console import Console

    from assistant.commands.ask_output import DraftPrinter, print_answer, print_retrieval
    from assistant.commands.output import literal
    from assistant.rag.answer import Answer
    from assistant.rag.pipeline import Retrieval

    # Not a terminal (piped, a log): rich would assume 80 columns and fold every cell (as `assistant search`).
    out, err = Console(width=shutil.get_terminal_size(fallback=(150, 40)).columns), Console(stderr=True)
    draft = DraftPrinter(out, model)
    status = err.status(literal("searching the similar reports ..."))
    status.start()
    try:
        for item in pipeline.iter_answer(query):
            status.stop()
            if isinstance(item, Answer):
                draft.close()
                print_answer(item, out)
                return item
            if isinstance(item, Retrieval):
                print_retrieval(item, query, out)
                if not pipeline.evidence_only:
                    status.update(literal(f"asking {model} ..."))
                    status.start()
            else:
                draft.feed(item)
    finally:
        status.stop()
    raise AssertionError("unreachable: the pipeline always ends with an Answer")
