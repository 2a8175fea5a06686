"""`assistant serve`: answer `ask`'s questions from pipelines kept loaded, over a Unix socket.

One question at a time (a llama.cpp context serves one call anyway; a second `ask` waits in the socket's queue). A
request is one JSON line: `ask`'s arguments as typed, the working folder and the RADSEARCH_* variables they are read
with (`{"argv": [...], "cwd": PATH, "env": {...}}`), so the client imports nothing before it hands them over. The
server reads them as the CLI does (a `parse` function from assistant/commands/ask_cmd.py) and answers only when they
give its own settings, every path in them resolved against the client's folder (assistant/warm/address.py). The
reply is JSON lines: `refused` (other settings, `--no-server`, or arguments the CLI should report: the client then
runs the CLI; the server logs why, never the question), or `accepted` (how the answer will be printed, the query)
then, in the order `ask` prints them, `start` (who answers), `note`s, `retrieval`, `piece`s of the model's text and
`answer` (printed whole, for --json and --markdown: `start`, `note`s and `answer`, whose token usage the model then
reports), or an `error` (bad input such as a missing index, shown as `ask` shows it). A client that goes away stops
its answer: the pipeline's stream is closed, which ends the model's call.

Why the guards (issue 51): an index replaced by `assistant update` or a rebuild is a new folder; each question
compares the folder's generation (retriever/index/swap.py) with the loaded one's and reloads it when it changed, so
no answer comes from a report that was removed. A client has REQUEST_TIMEOUT_S for its whole request line (and for
each event it is sent): one that connects and sends nothing, or a byte now and then, no longer holds the only
thread for everyone else.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import socketserver
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.rag.assemble import AskCall, AskOptions, Assembled, assemble
from assistant.rag.events import Note, Start, encode
from assistant.settings import Settings
from assistant.warm.address import differing, make_private_folder, resolved, settings_key, socket_path
from assistant.warm.client import FORWARDED_PREFIX, answers
from retriever.index.manifest import MANIFEST
from retriever.index.output_paths import named_path
from retriever.index.swap import generation

log = logging.getLogger(__name__)

#: Reads a client's arguments, as typed, in its working folder, as the CLI would; raises for whatever the CLI should
#: report instead (a usage error, --help).
Parse = Callable[[list[str], Path], AskCall]
#: Asked once at start-up, so the first resident's question finds the model's system prompt already read.
WARM_UP_QUERY = "Small left pleural effusion."
#: Seconds a client has to send its whole request line, and to take each event of its answer.
REQUEST_TIMEOUT_S = 5.0
#: A request is arguments and settings: far below this; a longer line is refused without reading on.
MAX_REQUEST_BYTES = 1 << 20


class ServerRunning(RuntimeError):
    """Another warm server already answers at this socket."""


class WarmServer(socketserver.UnixStreamServer):
    """The socket and the pipelines it answers with, one per AskOptions value, built on first use and rebuilt when
    their index folder was replaced. `cwd` is the folder the server's own settings were read in."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        parse: Parse,
        *,
        on_answer: Callable[[float], None] = lambda _: None,
        on_refuse: Callable[[str], None] = lambda _: None,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.settings = settings
        self.parse = parse
        self.on_answer = on_answer
        self.on_refuse = on_refuse
        self.request_timeout_s = request_timeout_s
        self.cwd = Path.cwd()
        self.key = settings_key(settings, self.cwd)
        self.pipelines: dict[AskOptions, tuple[tuple[int, ...] | None, Assembled]] = {}
        super().__init__(str(path), _Handler)

    def assembled(self, options: AskOptions) -> Assembled:
        """The pipeline for `options`, loaded again when its index folder is not the version it loaded."""
        folder = None if options.no_retrieval else Path(options.index or self.default_index())
        stamp = generation(folder, MANIFEST) if folder else ()
        kept = self.pipelines.get(options)
        if kept is not None and stamp is not None and kept[0] == stamp:
            return kept[1]
        if kept is not None:
            log.info("the index in %s was replaced: loading its new version", folder)
        assembled = assemble(options, self.settings)  # a folder mid-swap is waited for, a missing one reported
        self.pipelines[options] = (stamp, assembled)  # the generation before the load: a later swap reloads again
        return assembled

    def default_index(self) -> str:
        return str(named_path(self.settings.paths.default_index))

    def events(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The reply to one request, event by event (see the module docstring)."""
        from models.resolve import ModelNotAvailable
        from retriever.index.errors import IndexLoadError

        call = self._call(request)
        if isinstance(call, str):
            self.on_refuse(f"a question under {call}: the client answers it itself")
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

    def _call(self, request: dict[str, Any]) -> AskCall | str:
        """The call a request makes, or why this server does not answer it: other settings than its own, an
        `ask --no-server`, or arguments it cannot read (the client then runs the CLI, which reports them as usual).
        The index a call names by default is the server's, named in the call: it is where its pipeline comes from."""
        try:
            env = {k: str(v) for k, v in dict(request["env"]).items() if str(k).startswith(FORWARDED_PREFIX)}
            cwd = Path(str(request["cwd"]))
            call = self.parse([str(a) for a in request["argv"]], cwd)
            theirs = Settings.from_env(env, call.options.preset)
            if settings_key(theirs, cwd) != self.key:
                changed = differing(resolved(self.settings, self.cwd), resolved(theirs, cwd))
                return f"other settings ({', '.join(changed) or 'paths'})"
        except Exception as exc:  # noqa: BLE001 - whatever it is, the CLI reports it better than a refusal could
            return f"arguments or settings the CLI reports ({type(exc).__name__})"
        if not call.server:
            return "--no-server"
        if call.options.index is None and not call.options.no_retrieval:
            call = replace(call, options=replace(call.options, index=self.default_index()))
        return call


class _Handler(socketserver.BaseRequestHandler):
    server: WarmServer
    request: socket.socket

    def handle(self) -> None:
        request = self._read_request()
        if request is None:
            return
        start = time.monotonic()
        events = self.server.events(request)
        self.request.settimeout(self.server.request_timeout_s)  # each event: a client that stops reading is left
        try:
            for event in events:
                self.request.sendall(json.dumps(event, ensure_ascii=False).encode() + b"\n")
                if event["kind"] == "answer":
                    self.server.on_answer(time.monotonic() - start)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            log.info("the client left or stopped reading; its answer is stopped")
        finally:
            events.close()  # closes the pipeline's stream, which ends the model's call

    def _read_request(self) -> dict[str, Any] | None:
        """The request line, read within the server's timeout for the whole line (None, logged, past it or above
        MAX_REQUEST_BYTES); a line that is not a JSON object is an empty request (refused)."""
        deadline = time.monotonic() + self.server.request_timeout_s
        data = bytearray()
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or len(data) > MAX_REQUEST_BYTES:
                what = "sent no whole request" if left <= 0 else "sent a request too long"
                self.server.on_refuse(f"a client {what} within {self.server.request_timeout_s:g} s: connection closed")
                return None
            self.request.settimeout(left)
            try:
                piece = self.request.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                return None
            if not piece:
                break
            data += piece
        try:
            request = json.loads(bytes(data).partition(b"\n")[0] or b"{}")
        except ValueError:
            request = {}
        return request if isinstance(request, dict) else {}


def bind(settings: Settings, parse: Parse, env: Mapping[str, str], **options: Any) -> WarmServer:
    """The server listening at this data folder's socket (assistant/warm/address.py), its private folder created
    or checked first (UnsafeSocketFolder, a ValueError, otherwise). ServerRunning when another server answers there;
    a socket file nobody answers on (a server that was killed) is replaced. `options` go to WarmServer."""
    path = socket_path(settings.paths, env)
    make_private_folder(path.parent)
    if path.exists() or path.is_symlink():
        if answers(path):
            raise ServerRunning(f"a warm server already answers at {path}")
        path.unlink()
    server = WarmServer(path, settings, parse, **options)
    os.chmod(path, 0o600)
    return server


def serve(
    settings: Settings,
    warm: AskOptions,
    parse: Parse,
    *,
    env: Mapping[str, str] = os.environ,
    ready: Callable[[Path], None] = lambda _: None,
    **options: Any,
) -> None:
    """Bind (see `bind`), load `warm`'s pipeline, ask it WARM_UP_QUERY, call `ready`, then answer until interrupted,
    calling `on_answer` with each answer's seconds and `on_refuse` with why a question was not taken (never the
    question: a finding is patient data); the socket file is removed on the way out."""
    server = bind(settings, parse, env, **options)
    path = Path(server.server_address)  # type: ignore[arg-type]
    if warm.index is None and not warm.no_retrieval:  # as a request names it (WarmServer._call)
        warm = replace(warm, index=server.default_index())
    try:
        server.assembled(warm).pipeline.invoke(WARM_UP_QUERY)
        ready(path)
        server.serve_forever()
    finally:
        server.server_close()
        path.unlink(missing_ok=True)
