"""`assistant serve`: answer `ask`'s questions from pipelines kept loaded, over a Unix socket.

One question at a time (a llama.cpp context serves one call anyway; a second `ask` waits in the socket's queue). A
request is one JSON line: `ask`'s arguments as typed, the working folder and the environment they are read in
(`{"argv": [...], "cwd": PATH, "env": {...}}`), so the client imports nothing before it hands them over. The server
reads them as the CLI does (a `parse` function from assistant/commands/ask_cmd.py) and answers only when the
environment gives its own settings. The reply is JSON lines: `refused` (other settings, `--no-server`, or arguments
the CLI should report: the client then runs the CLI), or `accepted` (how the answer will be printed, the query) then,
in the order `ask` prints them, `start` (who answers), `note`s, `retrieval`, `piece`s of the model's text and
`answer` (printed whole, for --json and --markdown: `start`, `note`s and `answer`, whose token usage the model then
reports), or an `error` (bad input such as a missing index, shown as `ask` shows it). A client that goes away stops
its answer: the pipeline's stream is closed, which ends the model's call.
"""

from __future__ import annotations

import json
import logging
import os
import socketserver
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from assistant.rag.assemble import AskCall, AskOptions, Assembled, assemble
from assistant.rag.events import Note, Start, encode
from assistant.settings import Settings
from assistant.warm.address import settings_key, socket_path
from assistant.warm.client import answers

log = logging.getLogger(__name__)

#: Reads a client's arguments, as typed, in its working folder, as the CLI would; raises for whatever the CLI should
#: report instead (a usage error, --help).
Parse = Callable[[list[str], Path], AskCall]
#: Asked once at start-up, so the first resident's question finds the model's system prompt already read.
WARM_UP_QUERY = "Small left pleural effusion."


class ServerRunning(RuntimeError):
    """Another warm server already answers at this socket."""


class WarmServer(socketserver.UnixStreamServer):
    """The socket and the pipelines it answers with, one per AskOptions value, built on first use."""

    def __init__(self, path: Path, settings: Settings, parse: Parse, on_answer: Callable[[float], None]) -> None:
        self.settings = settings
        self.parse = parse
        self.on_answer = on_answer
        self.key = settings_key(settings)
        self.pipelines: dict[AskOptions, Assembled] = {}
        super().__init__(str(path), _Handler)

    def assembled(self, options: AskOptions) -> Assembled:
        if options not in self.pipelines:
            self.pipelines[options] = assemble(options, self.settings)
        return self.pipelines[options]

    def events(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The reply to one request, event by event (see the module docstring)."""
        from models.resolve import ModelNotAvailable
        from retriever.index.errors import IndexLoadError

        call = self._call(request)
        if call is None:
            yield {"kind": "refused"}
            return
        yield {"kind": "accepted", "output": call.output, "query": call.query}
        try:
            options = call.options
            assembled = self.assembled(options)
            pipeline = assembled.pipeline
            yield encode(Start(assembled.model_label, pipeline.evidence_only))
            for note in assembled.notices:
                yield encode(Note(note))
            query = call.query
            items = pipeline.iter_answer(query) if call.output == "stream" else iter([pipeline.invoke(query)])
            for item in items:
                yield encode(item)
        except (IndexLoadError, ModelNotAvailable, ValueError) as exc:
            yield {"kind": "error", "message": str(exc)}

    def _call(self, request: dict[str, Any]) -> AskCall | None:
        """The call a request makes, or None when this server does not answer it: other settings than its own, an
        `ask --no-server`, or arguments it cannot read (the client then runs the CLI, which reports them as usual)."""
        try:
            call = self.parse([str(a) for a in request["argv"]], Path(str(request["cwd"])))
            if settings_key(Settings.from_env(dict(request["env"]), call.options.preset)) != self.key:
                return None
        except Exception:  # noqa: BLE001 - whatever it is, the CLI reports it better than a refusal could
            return None
        return call if call.server else None


class _Handler(socketserver.StreamRequestHandler):
    server: WarmServer

    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline() or b"{}")
        except json.JSONDecodeError:
            request = {}
        start = time.monotonic()
        events = self.server.events(request if isinstance(request, dict) else {})
        try:
            for event in events:
                self.wfile.write(json.dumps(event, ensure_ascii=False).encode() + b"\n")
                self.wfile.flush()
                if event["kind"] == "answer":
                    self.server.on_answer(time.monotonic() - start)
        except (BrokenPipeError, ConnectionResetError):
            log.info("the client left; its answer is stopped")
        finally:
            events.close()  # closes the pipeline's stream, which ends the model's call


def serve(
    settings: Settings,
    warm: AskOptions,
    parse: Parse,
    *,
    ready: Callable[[Path], None] = lambda _: None,
    on_answer: Callable[[float], None] = lambda _: None,
) -> None:
    """Load `warm`'s pipeline, ask it WARM_UP_QUERY, call `ready`, then answer until interrupted, calling `on_answer`
    with each answer's seconds (never its text: a finding is patient data); the socket file is removed on the
    way out. ServerRunning when another server answers at the socket; a socket file nobody answers on (a server
    that was killed) is replaced."""
    path = socket_path(settings.paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    if path.exists() or path.is_symlink():
        if answers(path):
            raise ServerRunning(f"a warm server already answers at {path}")
        path.unlink()
    server = WarmServer(path, settings, parse, on_answer)
    try:
        os.chmod(path, 0o600)
        server.assembled(warm).pipeline.invoke(WARM_UP_QUERY)
        ready(path)
        server.serve_forever()
    finally:
        server.server_close()
        path.unlink(missing_ok=True)
