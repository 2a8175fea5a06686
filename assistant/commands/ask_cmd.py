"""`assistant ask`: a finding in, the most likely diagnosis out, with the reports it rests on.

Exit codes say what happened, so scripts can tell a real answer from a fallback: 0 answer, 2 bad input (empty
query, missing index, bad flag), 3 backend down (retrieval-only result printed), 4 backend timeout
(retrieval-only result printed), 5 the model's output held no answer (retrieval-only result printed), 1 the warm
server stopped before its answer was complete.

When `assistant serve` runs under the same settings, the `assistant` script hands the arguments to it before it loads
this command (assistant/__main__.py, assistant/commands/ask_warm.py); the server reads them with `parse_arguments` and
`ask_call`, as here, and the answer is the same, without this process loading the index, the encoder and the model.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assistant.commands.shared import (
    EXIT_BAD_INPUT,
    FIELD_HELP,
    BackendOption,
    IndexOption,
    ModelOption,
    ModeOption,
    PresetOption,
    RerankerOption,
    SearchEncoderOption,
    SinceOption,
    UntilOption,
)
from assistant.rag import answer_defaults
from retriever.search.methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from assistant.rag.assemble import AskCall
    from assistant.rag.events import Event
    from assistant.settings import Settings

#: `ask`'s parameters that are AskOptions fields as they are (the index folder is read from the working folder).
OPTION_NAMES = (
    "mode",
    "preset",
    "no_retrieval",
    "encoder",
    "k",
    "prompt",
    "field",
    "method",
    "since",
    "until",
    "backend",
    "model",
    "reranker",
)


QueryArgument = Annotated[str, typer.Argument(help="Finding text, e.g. 'blunting of the right costophrenic angle'.")]
NoRetrievalOption = Annotated[bool, typer.Option("--no-retrieval", help="Ask the LLM alone (--mode no-retrieval).")]
KOption = Annotated[
    int,
    typer.Option(
        "-k",
        "--k",
        min=1,
        max=answer_defaults.MAX_K,
        help=f"Reports retrieved (default: the preset's, {answer_defaults.K}); the evidence differential reads them "
        f"all, the first {answer_defaults.SHOWN_REPORTS} are listed.",
    ),
]
PromptOption = Annotated[
    str | None,
    typer.Option(
        help="The prompts/ template the mode asks the model with (choice: diagnosis_evidence; free-text: "
        "diagnosis_rag or diagnosis_candidates). Without --mode, a template implies its mode. `evidence` is the "
        "old name of --mode evidence (warns)."
    ),
]
FieldOption = Annotated[str | None, typer.Option(help=FIELD_HELP + " Default: the preset's.")]
MethodOption = Annotated[
    str | None,
    typer.Option(
        help="Retrieval: dense (the index's encoder), bm25, hybrid (rank fusion of both) or hybrid-weighted "
        f"(default: the preset's, {DEFAULT_METHOD})."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the Answer as JSON.")]
MarkdownOption = Annotated[
    bool,
    typer.Option("--markdown", help="Print the answer as a Markdown document with its reports and configuration."),
]
ServerOption = Annotated[
    bool,
    typer.Option(
        help="Hand the question to a running `assistant serve` (same settings), which has the index and the "
        "model loaded already; --no-server answers in this process."
    ),
]


def ask(
    query: QueryArgument,
    mode: ModeOption = None,
    preset: PresetOption = None,
    no_retrieval: NoRetrievalOption = False,
    encoder: SearchEncoderOption = None,
    k: KOption = None,
    prompt: PromptOption = None,
    field: FieldOption = None,
    method: MethodOption = None,
    index: IndexOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    reranker: RerankerOption = None,
    as_json: JsonOption = False,
    as_markdown: MarkdownOption = False,
    server: ServerOption = True,
) -> None:
    """Answer a finding with the most likely diagnosis, grounded in retrieved reports."""
    arguments = dict(locals())  # the parameters as parsed, first: the warm server builds its call from them too
    from rich.console import Console

    from assistant.commands.ask_output import print_events
    from assistant.commands.output import print_error
    from assistant.commands.shared import read_settings
    from models.resolve import ModelNotAvailable
    from retriever.index.errors import IndexLoadError

    err = Console(stderr=True)
    try:
        call = ask_call(arguments, Path.cwd())
    except ValueError as exc:  # an empty query, --json with --markdown
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    settings = read_settings(err, call.options.preset)
    try:
        code = print_events(_local(settings, call), call.query, call.output, err)
    except (IndexLoadError, ModelNotAvailable, ValueError) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if code:
        raise typer.Exit(code)


def ask_call(arguments: Mapping[str, Any], cwd: Path) -> AskCall:
    """The call `ask`'s parsed `arguments` make, an index folder (`~` expanded) and any option naming a file or
    folder by a path read from `cwd` (the CLI's, or the client's when the warm server builds it). ValueError for an
    empty query or two whole-answer formats at once."""
    from assistant.rag.assemble import AskCall, AskOptions
    from assistant.warm.address import resolved_path_text
    from retriever.index.output_paths import named_path
    from retriever.search.query import clean_query

    if arguments["as_json"] and arguments["as_markdown"]:
        raise ValueError("--json and --markdown each print the whole answer: choose one")
    clean_query(arguments["query"])  # EmptyQueryError (a ValueError) before anything is loaded
    index = arguments["index"]
    named = {name: arguments[name] for name in OPTION_NAMES}
    for name in ("encoder", "model", "reranker"):  # a folder or file named by a path: read in `cwd` too
        if named[name]:
            named[name] = resolved_path_text(named[name], cwd, existing=False)
    chosen = named | checked_mode(arguments["mode"], arguments["prompt"])
    options = AskOptions(**chosen, index=str(named_path(cwd / index.expanduser())) if index is not None else None)
    output = "json" if arguments["as_json"] else "markdown" if arguments["as_markdown"] else "stream"
    return AskCall(arguments["query"], options, output, arguments["server"])


def checked_mode(mode: str | None, prompt: str | None) -> dict[str, str | None]:
    """`--mode` and `--prompt` as AskOptions take them: a mode checked, a prompt alone implying its mode, and the old
    `--prompt evidence` read as `--mode evidence` with a warning (ValueError for an unknown mode or prompt)."""
    import sys

    from assistant.rag.modes import EVIDENCE_PROMPT_ID, answer_mode, mode_of_prompt

    if prompt == EVIDENCE_PROMPT_ID:
        print("warning: --prompt evidence is now --mode evidence", file=sys.stderr)
        return {"mode": str(answer_mode(mode or EVIDENCE_PROMPT_ID)), "prompt": None}
    if mode is not None:
        return {"mode": str(answer_mode(mode)), "prompt": prompt}
    return {"mode": str(mode_of_prompt(prompt)) if prompt else None, "prompt": prompt}


def parse_arguments(args: Sequence[str]) -> dict[str, Any]:
    """`ask`'s parameters from its arguments as typed, read by the very declaration the CLI reads them with (the warm
    server reads a client's arguments here). Raises what the CLI would report (a usage error; --help exits): the
    client then runs the CLI, which reports it."""
    with _ask_command().make_context("ask", list(args)) as context:
        return dict(context.params)


@cache
def _ask_command() -> Any:
    """`ask` as the CLI declares it, built once per process (the warm server parses every request with it)."""
    single = typer.Typer(add_completion=False)
    single.command()(ask)
    return typer.main.get_command(single)


def _local(settings: Settings, call: AskCall) -> Iterator[Event]:
    """The answer of this process: the index, encoder and model loaded first (what a warm server saves)."""
    from assistant.rag.assemble import assemble
    from assistant.rag.events import Note, Start

    assembled = assemble(call.options, settings)
    pipeline = assembled.pipeline
    yield Start(assembled.model_label, pipeline.evidence_only)
    for notice in assembled.notices:
        yield Note(notice)
    if call.output == "stream":
        yield from pipeline.iter_answer(call.query)
    else:
        yield pipeline.invoke(call.query)  # not streamed, so the model reports its token usage
