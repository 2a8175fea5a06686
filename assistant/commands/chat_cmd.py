"""`assistant chat`: the Gradio chat for residents, served on this machine (127.0.0.1) unless told otherwise.

Safe by default for a hospital: loopback only, no public share link, Gradio analytics off (the `assistant`
command sets the switch before Gradio is imported, models/offline.py, so not even its start-up version check calls
out), optional password sign-in. For a team, see the README: `--host 0.0.0.0` only behind a firewall, better
behind a reverse proxy with TLS.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assistant.commands.shared import EXIT_BAD_INPUT, BackendOption, ModelOption, RerankerOption

if TYPE_CHECKING:
    from rich.console import Console

    from assistant.settings import Settings


HostOption = Annotated[
    str,
    typer.Option(
        help="Address to listen on. 127.0.0.1 = this machine only; 0.0.0.0 = every network interface (only behind a firewall or reverse proxy)."
    ),
]
PortOption = Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")]
AuthOption = Annotated[
    list[str] | None,
    typer.Option(
        help="Require sign-in: USER:PASSWORD, repeatable for one account per resident (their feedback names them); or set RADSEARCH_CHAT_AUTH, which keeps the password out of the process list."
    ),
]
IndexesOption = Annotated[
    list[Path] | None,
    typer.Option(help="Index folder to offer (repeatable); the default and installed indexes are offered too."),
]
ConcurrencyOption = Annotated[
    int,
    typer.Option(min=1, max=64, help="Requests processed at once; more wait in the queue and see their position."),
]
RootPathOption = Annotated[
    str | None,
    typer.Option(help="URL prefix when served behind a reverse proxy under a sub-path, e.g. /radsearch."),
]
#: The addresses only this machine can reach: the chat warns when it listens elsewhere without sign-in.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def chat(
    host: HostOption = "127.0.0.1",
    port: PortOption = 7860,
    auth: AuthOption = None,
    index: IndexesOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    reranker: RerankerOption = None,
    concurrency: ConcurrencyOption = 4,
    root_path: RootPathOption = None,
) -> None:
    """Start the chat: type a finding, get a streamed diagnosis with the similar reports beside it."""
    from rich.console import Console

    from assistant.chat.page import build_app
    from assistant.chat.serve import launch_app, startup_lines
    from assistant.chat.service import ChatConfig, ChatService
    from assistant.commands.output import literal
    from assistant.feedback.store import FeedbackStore

    err = Console(stderr=True)
    settings, credentials = _chat_settings(err, auth, backend, model, reranker)
    if host not in LOOPBACK and not credentials:
        _warn_open(err, host)
    feedback = FeedbackStore.at(settings.paths, os.environ).path
    config = ChatConfig(settings=settings, indexes=tuple(index or ()), concurrency=concurrency, feedback=feedback)
    service = ChatService(config)
    app = build_app(config, service)
    threading.Thread(target=service.warm_up, name="chat-warm-up", daemon=True).start()
    for line in startup_lines(service, host, port, credentials):
        err.print(literal(line), soft_wrap=True)
    launch_app(app, config, host=host, port=port, auth=credentials, root_path=root_path)


def _chat_settings(
    err: Console, auth: list[str] | None, backend: str | None, model: str | None, reranker: str | None
) -> tuple[Settings, list[tuple[str, str]] | None]:
    """The settings with the model and re-ranker flags applied and the sign-in accounts (`--auth`, else
    RADSEARCH_CHAT_AUTH); a bad value, or a second stage that cannot be loaded, is an error message and exit 2,
    before the page is built."""
    from assistant.commands.output import print_error
    from assistant.commands.shared import read_settings
    from assistant.settings import reranker_setting
    from models.resolve import ModelNotAvailable

    settings = read_settings(err)
    try:
        credentials = [c for value in (auth or [settings.chat.auth]) if (c := parse_auth(value)) is not None] or None
        settings = replace(settings, llm=settings.llm.with_flags(backend=backend, model=model))
        if reranker is not None:
            settings = replace(settings, search=replace(settings.search, reranker=reranker_setting(reranker)))
        settings.search.load_reranker()  # refused before the chat starts; the indexes load it per process, cached
        return settings, credentials
    except (ValueError, ModelNotAvailable) as exc:
        print_error(err, exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc


def _warn_open(err: Console, host: str) -> None:
    """Say that a chat listening on `host` (not this machine only) without sign-in lets anyone in."""
    from rich.text import Text

    err.print(
        Text.assemble(
            ("warning: ", "yellow"),
            f"listening on {host} without --auth: anyone who can reach this port can use the assistant and "
            "read the indexed reports.",
        )
    )


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """`user:password` -> (user, password); the password may contain colons, neither part may be empty."""
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ValueError("--auth must be USER:PASSWORD, both non-empty")
    return user, password
