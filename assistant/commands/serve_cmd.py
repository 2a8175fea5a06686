"""`assistant serve`: keep the index, the encoder and the model loaded for `assistant ask` (assistant/warm/).

A new `ask` process spends seconds loading them before it can answer; with a server running under the same settings,
`ask` hands its arguments over (assistant/commands/ask_warm.py), the server reads them as the CLI does, and `ask`
prints the answer as it is written, as fast as the chat. It listens on a Unix socket in a private folder of its user
(assistant/warm/address.py), never on the network; it says on stderr when it answers (the time) and when it refuses a
question (why, never the question). Ctrl-C (or SIGTERM) stops it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT, BackendOption, ModelOption, PresetOption


def serve(
    index: Annotated[Path | None, typer.Option(help="Index to load ahead (default: the demo/default index).")] = None,
    mode: Annotated[
        str | None, typer.Option(help="Answer mode to load ahead, as `assistant ask --mode` (others load when asked).")
    ] = None,
    prompt: Annotated[str | None, typer.Option(help="Its prompt, as `assistant ask --prompt`.")] = None,
    preset: PresetOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
) -> None:
    """Answer `assistant ask` from a process that keeps the index and the model loaded."""
    import signal
    import sys

    from rich.console import Console

    from assistant.commands.ask_cmd import ask_call, checked_mode, parse_arguments
    from assistant.commands.output import literal, print_error
    from assistant.commands.shared import read_settings
    from assistant.rag.assemble import AskOptions
    from assistant.warm.server import ServerRunning, serve
    from models.resolve import ModelNotAvailable
    from retriever.index.errors import IndexLoadError
    from retriever.index.output_paths import named_path

    err = Console(stderr=True)
    settings = read_settings(err, preset)
    try:
        chosen = checked_mode(mode, prompt)
    except ValueError as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    warm = AskOptions(**chosen, index=str(named_path(index)) if index else None, backend=backend, model=model)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # unwinds serve(), which removes the socket file

    status = err.status(literal("loading the index and the model ..."))

    def ready(path: Path) -> None:
        status.stop()
        err.print(literal(f"ready: `assistant ask` answers from this process ({path}); Ctrl-C stops it"))

    status.start()
    try:
        serve(
            settings,
            warm,
            lambda args, cwd: ask_call(parse_arguments(args), cwd),
            ready=ready,
            on_answer=lambda s: err.print(f"answered a question in {s:.2f} s"),
            on_refuse=lambda why: err.print(literal(f"refused: {why}")),
        )
    except (ServerRunning, IndexLoadError, ModelNotAvailable, ValueError) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt:
        pass
    finally:
        status.stop()
