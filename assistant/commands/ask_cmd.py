"""`assistant ask`: a finding in, the most likely diagnosis out, with the reports it rests on.

Exit codes say what happened, so scripts can tell a real answer from a fallback: 0 answer, 2 bad input (empty
query, missing index, bad flag), 3 backend down (retrieval-only result printed), 4 backend timeout
(retrieval-only result printed), 5 the model's output held no answer (retrieval-only result printed), 1 the warm
server stopped before its answer was complete.

When `assistant serve` runs under the same settings, the question goes to it (assistant/warm/): the answer is the same,
without this process loading the index, the encoder and the model first.
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
    from collections.abc import Iterator

    from rich.console import Console

    from assistant.rag.answer import Answer
    from assistant.rag.assemble import AskOptions
    from assistant.settings import Settings
    from assistant.warm.client import Event


EXIT_CODES = {"backend_unavailable": 3, "timeout": 4, "unparseable": 5}


def ask(
    query: Annotated[str, typer.Argument(help="Finding text, e.g. 'blunting of the right costophrenic angle'.")],
    no_retrieval: Annotated[bool, typer.Option("--no-retrieval", help="Ask the LLM alone (baseline).")] = False,
    encoder: Annotated[
        str | None, typer.Option(help="Encoder to search with; must be the one that built the index.")
    ] = None,
    k: Annotated[
        int,
        typer.Option(
            "-k",
            "--k",
            min=1,
            max=answer_defaults.MAX_K,
            help=f"Reports retrieved; the evidence differential reads them all, the first {answer_defaults.SHOWN_REPORTS} "
            "are listed.",
        ),
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
    server: Annotated[
        bool,
        typer.Option(
            help="Hand the question to a running `assistant serve` (same settings), which has the index and the "
            "model loaded already; --no-server answers in this process."
        ),
    ] = True,
) -> None:
    """Answer a finding with the most likely diagnosis, grounded in retrieved reports."""
    from rich.console import Console

    from assistant.commands.output import print_error
    from assistant.commands.shared import read_settings
    from assistant.rag.assemble import AskOptions
    from assistant.warm.client import WarmError
    from models.resolve import ModelNotAvailable
    from retriever.index.errors import IndexLoadError
    from retriever.index.output_paths import named_path
    from retriever.search.query import EmptyQueryError, clean_query

    err = Console(stderr=True)
    if as_json and as_markdown:
        print_error(err, "--json and --markdown each print the whole answer: choose one")
        raise typer.Exit(EXIT_BAD_INPUT)
    settings = read_settings(err)
    try:
        clean_query(query)
        options = AskOptions(
            no_retrieval=no_retrieval,
            encoder=encoder,
            k=k,
            prompt=prompt,
            field=field,
            method=method,
            index=str(named_path(index)) if index is not None else None,
            backend=backend,
            model=model,
            reranker=reranker,
            since=since,
            until=until,
        )
        streaming = not (as_json or as_markdown)
        items = (_warm(settings, options, query, streaming) if server else None) or _local(
            settings, options, query, streaming
        )
        answer = _show(items, query, err, streaming)
    except (EmptyQueryError, IndexLoadError, ModelNotAvailable, ValueError, WarmError) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except ConnectionError as exc:  # the warm server stopped mid-answer
        print_error(err, f"{exc}; ask again, or with --no-server to answer in this process")
        raise typer.Exit(1) from exc
    if as_json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    elif as_markdown:
        from assistant.chat.export import answer_document

        print(answer_document(answer), end="")
    code = EXIT_CODES.get(answer.degraded_kind or "", 0)
    if code:
        raise typer.Exit(code)


def _warm(settings: Settings, options: AskOptions, query: str, streaming: bool) -> Iterator[Event] | None:
    """The answer of a running `assistant serve` (assistant/warm/) under the same settings, or None."""
    from assistant.warm.address import settings_key, socket_path
    from assistant.warm.client import ask_warm

    return ask_warm(socket_path(settings.paths), settings_key(settings), options.to_dict(), query, stream=streaming)


def _local(settings: Settings, options: AskOptions, query: str, streaming: bool) -> Iterator[Event]:
    """The answer of this process: the index, encoder and model loaded first (what a warm server saves)."""
    from assistant.rag.assemble import assemble
    from assistant.warm.client import Note, Start

    assembled = assemble(options, settings)
    pipeline = assembled.pipeline
    yield Start(assembled.model_label, pipeline.evidence_only)
    for notice in assembled.notices:
        yield Note(notice)
    if streaming:
        yield from pipeline.iter_answer(query)
    else:
        yield pipeline.invoke(query)  # not streamed, so the model reports its token usage


def _show(items: Iterator[Event], query: str, err: Console, streaming: bool) -> Answer:
    """Print each part as soon as it is known (assistant/commands/ask_output.py): notices on stderr, the reports and
    their evidence, the model's answer while it is written, then the checked answer; without `streaming` (--json,
    --markdown) only the notices, and the Answer is returned for printing whole. A spinner on stderr covers the waits,
    and is stopped before anything is printed so the two never interleave on a terminal."""
    from rich.console import Console

    from assistant.commands.ask_output import DraftPrinter, print_answer, print_retrieval
    from assistant.commands.output import literal, print_note
    from assistant.rag.answer import Answer, Retrieval
    from assistant.warm.client import Note, Start

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
